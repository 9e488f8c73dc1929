import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from '../support/process';

const VERSION = (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string })
  .version;

/** The built CLI's `--version`, and what its quick commands load: not the server (Nest, Swagger, gRPC's protobufjs). */
describe('tollgate --version, and the quick commands load only what they need', () => {
  let scratch: string;
  let hook: string;

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'tollgate-cli-version-'));
    // Preloaded with --require: notes every module asked for by require() (ES modules too, which Node 20 loads
    // through require here) and every file in the require cache, and writes them down as the process exits.
    hook = join(scratch, 'note-modules.cjs');
    writeFileSync(
      hook,
      `const Module = require('node:module');
const fs = require('node:fs');
const asked = new Set();
const original = Module.prototype.require;
Module.prototype.require = function (id) { asked.add(id); return original.apply(this, arguments); };
process.on('exit', () => {
  for (const file of Object.keys(require.cache)) asked.add(file);
  fs.writeFileSync(process.env.NOTE_MODULES_TO, [...asked].join('\\n'));
});
`,
    );
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it.each([['--version'], ['-V'], ['version']])('%s prints the version from package.json and exits 0', async (arg) => {
    const r = await cli([arg]);
    expect(r).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('--help names --version and the version command', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/-V, --version\s+print the version and exit/);
    expect(r.stdout).toMatch(/\n\s+version\s+Print the version and exit/);
  });

  /** The packages a run of the CLI loaded, as the hook saw them. */
  async function packagesLoaded(args: string[], env: NodeJS.ProcessEnv = {}) {
    const note = join(scratch, `modules-${args.join('_').replace(/\W/g, '')}.txt`);
    const r = await cli(args, { ...env, NODE_OPTIONS: `--require ${hook}`, NOTE_MODULES_TO: note });
    const packages = new Set<string>();
    for (const entry of readFileSync(note, 'utf8').split('\n')) {
      const p = packageOf(entry);
      if (p) packages.add(p);
    }
    return { ...r, packages };
  }

  /** "@nestjs/core" for "@nestjs/core/index.js" or "…/node_modules/@nestjs/core/dist/x.js"; nothing for our files. */
  function packageOf(entry: string): string | undefined {
    if (!entry || entry.startsWith('node:') || entry.startsWith('.')) return undefined;
    const at = entry.lastIndexOf('/node_modules/');
    if (at < 0 && entry.startsWith('/')) return undefined;
    const parts = (at < 0 ? entry : entry.slice(at + '/node_modules/'.length)).split('/');
    return parts[0].startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  }

  const SERVER = ['@nestjs/core', '@nestjs/swagger', 'protobufjs', '@grpc/grpc-js', 'typeorm', 'pg'];

  it.each([[['--version']], [['--help']], [['token', '--sub', 'ann', '--role', 'approver']]])(
    '%j loads none of the server: no Nest, Swagger, protobufjs, gRPC, TypeORM or pg',
    async (args) => {
      const r = await packagesLoaded(args, { TOLLGATE_JWT_SECRET: 'a-test-secret-long-enough-for-hs256-0123456789' });
      expect(r.code).toBe(0);
      expect(r.packages).toContain('commander'); // the hook saw the CLI's own packages
      if (args[0] === 'token') {
        expect(r.stdout).toMatch(/^ey[\w-]+\.[\w-]+\.[\w-]+\n$/);
        expect(r.packages).toContain('jose');
      }
      for (const p of SERVER) expect(r.packages).not.toContain(p);
    },
  );

  it('the same hook sees the server when a command needs it (serve, stopped by its own config check)', async () => {
    // PORT is checked after the server's modules load: serve exits 2 without starting anything.
    const r = await packagesLoaded(['serve'], { PORT: 'not-a-port', DATABASE_URL: 'postgres://127.0.0.1:1/none' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('PORT');
    for (const p of ['@nestjs/core', '@nestjs/swagger', 'protobufjs']) expect(r.packages).toContain(p);
  });

  it('a copy that is not built yet names the directory to build, whatever the current one', async () => {
    const unbuilt = join(scratch, 'unbuilt-tollgate');
    mkdirSync(join(unbuilt, 'bin'), { recursive: true });
    copyFileSync(BIN, join(unbuilt, 'bin', 'tollgate.js'));
    const r = await cli(['--version'], {}, join(unbuilt, 'bin', 'tollgate.js'));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`not built yet. Run \`npm run build\` in ${unbuilt}`);
  });

  /** The built CLI, with only the environment given (and PATH, HOME), in a directory of no project. */
  function cli(args: string[], env: NodeJS.ProcessEnv = {}, bin = BIN) {
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [bin, ...args], {
        cwd: scratch,
        env: { PATH: process.env.PATH, HOME: scratch, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }
});
