import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * `npm start` builds only what changed since the last whole build (scripts/build-if-stale.js), run here on a small
 * tree whose `npm run build` is the real script's --begin/--done around a step that counts the builds.
 */
const SCRIPT = join(__dirname, '..', '..', 'scripts', 'build-if-stale.js');

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'tollgate-build-'));
  const files: Record<string, string> = {
    'src/server.ts': 'export {};\n',
    'src/server.spec.ts': 'test.todo("x");\n',
    'web/src/main.tsx': 'export {};\n',
    'packages/sdk/src/index.ts': 'export {};\n',
    'proto/tollgate/v1/tollgate.proto': 'syntax = "proto3";\n',
    'package.json': JSON.stringify({
      name: 't',
      private: true,
      scripts: {
        build: [
          `node ${JSON.stringify(SCRIPT)} --begin`,
          'node -e "' +
            "const f=require('fs');f.appendFileSync('builds','x');" +
            "for (const p of ['dist/src/adapters/cli/main.js','dist/web/index.html','packages/sdk/dist/index.js','packages/sdk/proto/tollgate/v1/tollgate.proto'])" +
            "{f.mkdirSync(require('path').dirname(p),{recursive:true});f.writeFileSync(p,'')}" +
            '"',
          `node ${JSON.stringify(SCRIPT)} --done`,
        ].join(' && '),
      },
    }),
  };
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function start(): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [SCRIPT], {
    env: { ...process.env, TOLLGATE_BUILD_ROOT: root, npm_execpath: '' },
    encoding: 'utf8',
  });
  return { status: r.status, out: r.stdout + r.stderr };
}
const builds = () => (existsSync(join(root, 'builds')) ? readFileSync(join(root, 'builds'), 'utf8').length : 0);
/** Moves a file's date forward, as an edit would (file systems date to the second or coarser on some machines). */
const touch = (p: string, secondsAhead = 5) => {
  const t = new Date(Date.now() + secondsAhead * 1000);
  utimesSync(join(root, p), t, t);
};

describe('npm start builds only when something changed', () => {
  it('builds a fresh tree, then skips while nothing changed', () => {
    expect(start()).toMatchObject({ status: 0, out: expect.stringContaining('is missing, building') });
    expect(builds()).toBe(1);
    expect(start()).toMatchObject({ status: 0, out: expect.stringContaining('up to date') });
    expect(builds()).toBe(1);
  });

  it.each(['src/server.ts', 'web/src/main.tsx', 'packages/sdk/src/index.ts', 'proto/tollgate/v1/tollgate.proto'])(
    'builds again once %s changed',
    (file) => {
      start();
      touch(file);
      expect(start().out).toContain('changed, building');
      expect(builds()).toBe(2);
    },
  );

  it('a spec file is not part of the build: changing one builds nothing', () => {
    start();
    touch('src/server.spec.ts');
    expect(start().out).toContain('up to date');
    expect(builds()).toBe(1);
  });

  it('builds again when an output is gone, or when the last build never finished', () => {
    start();
    rmSync(join(root, 'dist/web/index.html'));
    expect(start().out).toContain('dist/web/index.html is missing');
    expect(builds()).toBe(2);
    rmSync(join(root, 'dist/.build-stamp')); // as a build that failed half-way leaves it
    expect(start().out).toContain('no whole build is on record');
    expect(builds()).toBe(3);
  });

  it('a file saved while a build ran is newer than its mark', () => {
    start();
    const stamp = join(root, 'dist/.build-stamp');
    const began = new Date(Date.now() - 10_000);
    utimesSync(stamp, began, began); // the build began 10 s ago...
    touch('src/server.ts', -5); // ...and this was saved 5 s ago, while it ran
    expect(start().out).toContain('src changed, building');
  });
});
