#!/usr/bin/env node
/**
 * `npm start` (and `npm run migrate`) build only when something the build reads changed since the last whole
 * build: `npm install` has just built, and a restart should not spend 20–40 s type-checking again.
 *
 *   node scripts/build-if-stale.js           runs `npm run build` when stale, else says it is up to date
 *   node scripts/build-if-stale.js --begin   (first step of `npm run build`) notes when the build started
 *   node scripts/build-if-stale.js --done    (last step) marks that whole build complete
 *
 * The mark is dist/.build-stamp, dated when its build began: a file saved while a build ran is newer than the
 * mark, so the next start builds again. A failed build never gets the mark. TOLLGATE_BUILD_ROOT points it at
 * another tree (its tests).
 */
const { spawnSync } = require('node:child_process');
const { existsSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = process.env.TOLLGATE_BUILD_ROOT || join(__dirname, '..');
const STAMP = join(ROOT, 'dist', '.build-stamp');
const STARTED = join(ROOT, 'dist', '.build-started');

/** What the build reads: sources (not specs, which it skips), the proto, its configs and the lockfile. */
const INPUTS = [
  ['src', (n) => n.endsWith('.ts') && !n.endsWith('.spec.ts')],
  ['migrations', (n) => n.endsWith('.ts')],
  ['packages/sdk/src', (n) => n.endsWith('.ts')],
  ['proto', (n) => n.endsWith('.proto')],
  ['web', (n) => !n.endsWith('.md')],
  ['scripts/build-web.js'],
  ['packages/sdk/scripts/copy-proto.mjs'],
  ['tsconfig.json'],
  ['tsconfig.build.json'],
  ['packages/sdk/tsconfig.json'],
  ['package.json'],
  ['package-lock.json'],
];

/** What a whole build leaves: a start needs all of them, whatever the mark says. */
const OUTPUTS = [
  'dist/src/adapters/cli/main.js',
  'dist/web/index.html',
  'packages/sdk/dist/index.js',
  'packages/sdk/proto/tollgate/v1/tollgate.proto',
];

function newest(path, keep) {
  if (!existsSync(path)) return 0;
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let t = 0;
  for (const e of readdirSync(path, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist') continue;
    const p = join(path, e.name);
    if (e.isDirectory()) t = Math.max(t, newest(p, keep));
    else if (!keep || keep(e.name)) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

/** Why a build is needed, or null when the last whole build is newer than everything it read. */
function staleBecause() {
  const missing = OUTPUTS.find((o) => !existsSync(join(ROOT, o)));
  if (missing) return `${missing} is missing`;
  if (!existsSync(STAMP)) return 'no whole build is on record';
  const built = statSync(STAMP).mtimeMs;
  for (const [path, keep] of INPUTS) if (newest(join(ROOT, path), keep) > built) return `${path} changed`;
  return null;
}

const arg = process.argv[2];
if (arg === '--begin') {
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  writeFileSync(STARTED, `${new Date().toISOString()}\n`);
} else if (arg === '--done') {
  if (existsSync(STARTED)) renameSync(STARTED, STAMP);
} else if (arg !== undefined) {
  console.error(`build-if-stale: unknown argument ${arg} (--begin, --done or nothing)`);
  process.exit(2);
} else {
  const why = staleBecause();
  if (why === null) {
    console.log('build: up to date (dist/ and packages/sdk/dist/ are newer than their sources), skipped');
  } else {
    console.log(`build: ${why}, building`);
    const npm = process.env.npm_execpath;
    const r = npm
      ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: ROOT, stdio: 'inherit' })
      : spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' });
    process.exit(r.status ?? 1);
  }
}
