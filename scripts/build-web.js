#!/usr/bin/env node
'use strict';
/**
 * Bundles the web inbox (web/src, Preact + TypeScript) into dist/web: index.html and content-hashed files
 * under assets/, which the service serves at GET / (src/adapters/web); the service worker (web/src/sw) as sw.js and
 * the web app manifest beside index.html, at the site's root, with PNG icons drawn from web/icon.svg
 * (below). Part of `npm run build`. Type-checking is `npm run typecheck` (esbuild only strips types).
 */
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { basename, join } = require('node:path');
const { deflateSync } = require('node:zlib');
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
  const hashed = (name, body, ext) => `${name}-${createHash('sha256').update(body).digest('hex').slice(0, 8)}.${ext}`;
  const iconName = hashed('icon', icon, 'svg');
  writeFileSync(join(assets, iconName), icon);
  const pngs = appIcons(icon.toString('utf8')).map((i) => ({ ...i, file: hashed(i.name, i.body, 'png') }));
  for (const i of pngs) writeFileSync(join(assets, i.file), i.body);
  // At the root: a worker's scope is at most its own folder, and the manifest's start_url and scope are `/`.
  writeFileSync(join(out, 'manifest.webmanifest'), JSON.stringify(manifest(pngs, iconName), null, 2));
  const sw = await esbuild.build({
    absWorkingDir: root,
    entryPoints: ['web/src/sw/worker.ts'],
    bundle: true,
    minify: true,
    format: 'iife', // a classic worker script: module service workers are not everywhere yet
    target: ['chrome111', 'firefox115', 'safari16.4'],
    tsconfig: 'web/tsconfig.json',
    define: { TOLLGATE_ICON: JSON.stringify(`/assets/${pngs[0].file}`) },
    outfile: join(out, 'sw.js'),
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  const html = readFileSync(join(root, 'web', 'index.html'), 'utf8')
    .replace('%JS%', basename(jsPath))
    .replace('%CSS%', basename(js.cssBundle))
    .replace('%ICON%', iconName);
  writeFileSync(join(out, 'index.html'), html);
  const size = (p) => `${(result.metafile.outputs[p].bytes / 1024).toFixed(1)} KiB`;
  const swBytes = Object.values(sw.metafile.outputs)[0].bytes;
  console.log(
    `web inbox → dist/web: ${basename(jsPath)} ${size(jsPath)}, ${basename(js.cssBundle)} ${size(js.cssBundle)}, sw.js ${(swBytes / 1024).toFixed(1)} KiB`,
  );
}

/** The web app manifest: installable as "Tollgate", opening on the inbox. */
function manifest(pngs, svgName) {
  return {
    id: '/',
    name: 'Tollgate',
    short_name: 'Tollgate',
    description: 'Approve or reject the tool calls your AI agents ask to make.',
    start_url: '/',
    scope: '/',
    display: 'standalone',
    background_color: '#ffffff',
    theme_color: '#1d4ed8',
    icons: [
      ...pngs.map((i) => ({
        src: `/assets/${i.file}`,
        sizes: `${i.pixels}x${i.pixels}`,
        type: 'image/png',
        purpose: i.purpose,
      })),
      { src: `/assets/${svgName}`, sizes: 'any', type: 'image/svg+xml', purpose: 'any' },
    ],
  };
}

/*
 * The app's PNG icons (web app manifest: 192 and 512 pixels, and a maskable one) drawn from web/icon.svg at build
 * time, so the inbox keeps one icon and no image tool is needed. The SVG is drawn with rectangles only (a rounded
 * square and a path of M/h/v/H/V/z moves); anything else in it stops the build rather than drawing something else.
 */

/** The shapes of the icon: the background (a rounded square) and the glyph's rectangles, in the SVG's units. */
function readIcon(svg) {
  const view = /viewBox="0 0 (\d+) (\d+)"/.exec(svg);
  const bg = /<rect width="(\d+)" height="(\d+)" rx="(\d+)" fill="(#[0-9a-f]{3}|#[0-9a-f]{6})"\/>/i.exec(svg);
  const path = /<path d="([^"]+)" fill="(#[0-9a-f]{3}|#[0-9a-f]{6})"\/>/i.exec(svg);
  if (!view || !bg || !path || view[1] !== view[2])
    throw new Error(
      'web/icon.svg is no longer a square with a rounded rect and one path: update readIcon in scripts/build-web.js',
    );
  const rects = [];
  for (const sub of path[1].split(/(?<=z)/i).filter((s) => s.trim())) {
    const m = /^M(\d+(?:\.\d+)?) (\d+(?:\.\d+)?)((?:[hvHV]-?\d+(?:\.\d+)?)+)z$/i.exec(sub.trim());
    if (!m)
      throw new Error(
        `web/icon.svg: the path part "${sub}" is not a rectangle: update readIcon in scripts/build-web.js`,
      );
    let [x, y] = [Number(m[1]), Number(m[2])];
    const xs = [x];
    const ys = [y];
    for (const [, op, n] of m[3].matchAll(/([hvHV])(-?\d+(?:\.\d+)?)/g)) {
      if (op === 'h') x += Number(n);
      else if (op === 'H') x = Number(n);
      else if (op === 'v') y += Number(n);
      else y = Number(n);
      xs.push(x);
      ys.push(y);
    }
    rects.push({ x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) });
  }
  return { size: Number(view[1]), radius: Number(bg[3]), bg: hex(bg[4]), fg: hex(path[2]), rects };
}

/** `#rgb` or `#rrggbb` as [r, g, b]. */
const hex = (h) =>
  h.length === 4
    ? [1, 2, 3].map((i) => parseInt(h[i] + h[i], 16))
    : [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));

/** CRC-32 (ISO 3309, as PNG chunks use it); zlib.crc32 is not in every Node the build runs on. */
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Whether a point (in icon units) is inside the rounded square. */
function inRounded(px, py, size, r) {
  const cx = Math.min(Math.max(px, r), size - r);
  const cy = Math.min(Math.max(py, r), size - r);
  return (px - cx) ** 2 + (py - cy) ** 2 <= r * r;
}

/**
 * RGBA pixels of the icon at `pixels` square, 4×4 samples a pixel. Maskable: the background fills the whole square
 * (the platform cuts its own shape) and the glyph shrinks into the safe zone, the middle 80 % circle.
 */
function draw(icon, pixels, maskable) {
  const out = Buffer.alloc(pixels * pixels * 4);
  const unit = icon.size / pixels;
  const glyphScale = maskable ? 0.7 : 1;
  const c = icon.size / 2;
  const S = 4;
  for (let py = 0; py < pixels; py++) {
    for (let px = 0; px < pixels; px++) {
      let bg = 0;
      let fg = 0;
      for (let sy = 0; sy < S; sy++) {
        for (let sx = 0; sx < S; sx++) {
          const x = (px + (sx + 0.5) / S) * unit;
          const y = (py + (sy + 0.5) / S) * unit;
          if (!maskable && !inRounded(x, y, icon.size, icon.radius)) continue;
          bg++;
          const gx = c + (x - c) / glyphScale;
          const gy = c + (y - c) / glyphScale;
          if (icon.rects.some((r) => gx >= r.x0 && gx < r.x1 && gy >= r.y0 && gy < r.y1)) fg++;
        }
      }
      const i = (py * pixels + px) * 4;
      const a = bg / (S * S);
      if (a === 0) continue;
      const f = fg / bg;
      for (let k = 0; k < 3; k++) out[i + k] = Math.round(icon.bg[k] * (1 - f) + icon.fg[k] * f);
      out[i + 3] = Math.round(a * 255);
    }
  }
  return out;
}

/** A PNG (RGBA, 8 bits a channel, no interlace) of square pixels. */
function png(rgba, pixels) {
  const chunk = (type, data) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'ascii');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(pixels, 0);
  ihdr.writeUInt32BE(pixels, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  const rows = Buffer.alloc(pixels * (pixels * 4 + 1));
  for (let y = 0; y < pixels; y++) rgba.copy(rows, y * (pixels * 4 + 1) + 1, y * pixels * 4, (y + 1) * pixels * 4);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The manifest's icons from the SVG's text: `[{name, pixels, purpose, body}]`. */
function appIcons(svg) {
  const icon = readIcon(svg);
  return [
    { name: 'icon-192', pixels: 192, purpose: 'any' },
    { name: 'icon-512', pixels: 512, purpose: 'any' },
    { name: 'icon-maskable-512', pixels: 512, purpose: 'maskable' },
  ].map((i) => ({ ...i, body: png(draw(icon, i.pixels, i.purpose === 'maskable'), i.pixels) }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
