#!/usr/bin/env node
'use strict';
/**
 * Bundles the web inbox (web/src, Preact + TypeScript) into dist/web: index.html and content-hashed files
 * under assets/, which the service serves at GET / (src/adapters/web). Part of `npm run build`.
 * Type-checking is `npm run typecheck` (esbuild only strips types).
 */
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { basename, join } = require('node:path');
const esbuild = require('esbuild');

const root = join(__dirname, '..');
const out = join(root, 'dist', 'web');
const assets = join(out, 'assets');

async function main() {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(assets, { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { app: 'web/src/main.tsx' },
    bundle: true,
    minify: true,
    sourcemap: 'linked',
    format: 'esm',
    target: ['chrome111', 'firefox115', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    loader: { '.svg': 'text' }, // the favicon, drawn again with the pending count (web/src/ui/attention.tsx)
    tsconfig: 'web/tsconfig.json',
    outdir: assets,
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.entries(result.metafile.outputs);
  const [jsPath, js] = outputs.find(([, o]) => o.entryPoint === 'web/src/main.tsx');
  const icon = readFileSync(join(root, 'web', 'icon.svg'));
  const iconName = `icon-${createHash('sha256').update(icon).digest('hex').slice(0, 8)}.svg`;
  writeFileSync(join(assets, iconName), icon);
  const html = readFileSync(join(root, 'web', 'index.html'), 'utf8')
    .replace('%JS%', basename(jsPath))
    .replace('%CSS%', basename(js.cssBundle))
    .replace('%ICON%', iconName);
  writeFileSync(join(out, 'index.html'), html);
  const size = (p) => `${(result.metafile.outputs[p].bytes / 1024).toFixed(1)} KiB`;
  console.log(
    `web inbox → dist/web: ${basename(jsPath)} ${size(jsPath)}, ${basename(js.cssBundle)} ${size(js.cssBundle)}`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
