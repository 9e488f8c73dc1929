import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';

/** One built file of the web inbox, held in memory (the whole inbox is a few tens of KiB). */
export interface WebAsset {
  body: Buffer;
  contentType: string;
  etag: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
};

/** Files served at the site's root rather than under /assets: the worker (its scope is its folder) and the manifest. */
export const ROOT_FILES = ['sw.js', 'manifest.webmanifest'] as const;
export type RootFile = (typeof ROOT_FILES)[number];

/** Names esbuild gives hashed files: `app-3F2K1QZC.js`. Nothing else can be asked for. */
export const ASSET_NAME = /^[A-Za-z0-9_-]+\.[A-Za-z0-9]+(\.map)?$/;

/**
 * The inbox as `npm run build` left it in `dist/web`: `index.html` and hashed files under `assets/`.
 * Read once at start; a request never touches the file system, so no path can escape the folder.
 */
export class WebAssets {
  private constructor(
    readonly index: WebAsset | undefined,
    private readonly files: Map<string, WebAsset>,
    readonly dir: string,
    private readonly rootFiles: Map<RootFile, WebAsset> = new Map(),
  ) {}

  static load(dir = defaultWebDir()): WebAssets {
    const files = new Map<string, WebAsset>();
    const assetsDir = join(dir, 'assets');
    if (existsSync(assetsDir)) {
      for (const name of readdirSync(assetsDir)) {
        const path = join(assetsDir, name);
        const type = CONTENT_TYPES[extname(name)];
        if (type && ASSET_NAME.test(name) && statSync(path).isFile()) files.set(name, asset(readFileSync(path), type));
      }
    }
    const indexPath = join(dir, 'index.html');
    const index = existsSync(indexPath) ? asset(readFileSync(indexPath), CONTENT_TYPES['.html']) : undefined;
    const rootFiles = new Map<RootFile, WebAsset>();
    for (const name of ROOT_FILES) {
      const path = join(dir, name);
      if (existsSync(path)) rootFiles.set(name, asset(readFileSync(path), CONTENT_TYPES[extname(name)]));
    }
    return new WebAssets(index, files, dir, rootFiles);
  }

  get(name: string): WebAsset | undefined {
    return ASSET_NAME.test(name) ? this.files.get(name) : undefined;
  }

  root(name: RootFile): WebAsset | undefined {
    return this.rootFiles.get(name);
  }
}

function asset(body: Buffer, contentType: string): WebAsset {
  return { body, contentType, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/** `<repo>/dist/web`, found from this file whether it runs built (dist/src/…) or from source (tests). */
export function defaultWebDir(from = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'bin', 'tollgate.js')))
      return join(dir, 'dist', 'web');
    if (dirname(dir) === dir) return join(from, 'web');
  }
}
