import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { client } from '../support/http';
import { BIN, exited, freePort, serverEnv } from '../support/process';
import { startTestServer, TestServer } from '../support/server';

const CHECKOUT = join(__dirname, '..', '..');

/**
 * `tollgate token` run from the user's own project, not the checkout: it signs with the dev secret of the data dir
 * it is told about (--data-dir, TOLLGATE_DATA_DIR), else ./.tollgate, else the .tollgate beside the Tollgate it
 * belongs to (where `npm start` in the checkout makes it), and says where it looked when it finds none.
 */
describe('tollgate token from anywhere', () => {
  let scratch: string;
  let project: string;
  let serverData: string;
  let secret: string;
  let server: TestServer;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'tollgate-cli-token-'));
    project = join(scratch, 'my-agent');
    mkdirSync(project);
    // The data dir of a server started in embedded mode: its dev secret, as the server writes it.
    serverData = join(scratch, 'server-data');
    secret = writeDevSecret(serverData);
    server = await startTestServer({ dataDir: serverData, auth: { secret, devSecret: true } });
    api = client(server.url);
  });
  afterAll(async () => {
    await server.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  /** Whom the server takes the token for (its GET /v1/me), or its status when it refuses it. */
  async function acceptedAs(token: string): Promise<string | number> {
    const r = await api.get('/v1/me', token.trim());
    return r.status === 200 ? (r.body.id as string) : r.status;
  }

  it('signs with the dev secret of the data dir TOLLGATE_DATA_DIR names, from another directory', async () => {
    const r = await token(BIN, ['--sub', 'ann', '--role', 'approver'], { TOLLGATE_DATA_DIR: serverData });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(await acceptedAs(r.stdout)).toBe('ann');
  });

  it("--aud gives the token another audience than the server's: an end user's token for user.token", async () => {
    const r = await token(BIN, ['--sub', 'ann', '--aud', 'agent-app'], { TOLLGATE_DATA_DIR: serverData });
    expect(r.code).toBe(0);
    expect(decodeJwt(r.stdout.trim()).aud).toBe('agent-app');
  });

  it('--data-dir names it too, and wins over TOLLGATE_DATA_DIR', async () => {
    const empty = join(scratch, 'empty-env-dir');
    const r = await token(BIN, ['--sub', 'bea', '--data-dir', serverData], { TOLLGATE_DATA_DIR: empty });
    expect(r.code).toBe(0);
    expect(await acceptedAs(r.stdout)).toBe('bea');
  });

  it.each([
    ['--data-dir', (dir: string) => ({ args: ['--data-dir', dir], env: {} })],
    ['TOLLGATE_DATA_DIR', (dir: string) => ({ args: [], env: { TOLLGATE_DATA_DIR: dir } })],
  ])('a data dir named by %s without a dev secret: exit 2, saying which file it looked for', async (how, given) => {
    const dir = join(scratch, `no-secret-${how}`);
    const { args, env } = given(dir);
    const r = await token(BIN, ['--sub', 'ann', ...args], env);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`no dev secret at ${join(dir, 'dev-jwt-secret')} (the data dir from ${how})`);
    expect(r.stderr).toContain('TOLLGATE_JWT_SECRET');
  });

  describe('a Tollgate installed elsewhere (as `npm install -g` of the checkout links it), told nothing', () => {
    let install: string;
    let installBin: string;

    beforeAll(() => {
      // The built CLI in a directory of its own, with the checkout's packages.
      install = join(scratch, 'tollgate');
      mkdirSync(join(install, 'bin'), { recursive: true });
      copyFileSync(BIN, join(install, 'bin', 'tollgate.js'));
      copyFileSync(join(CHECKOUT, 'package.json'), join(install, 'package.json'));
      cpSync(join(CHECKOUT, 'dist', 'src'), join(install, 'dist', 'src'), { recursive: true });
      symlinkSync(join(CHECKOUT, 'node_modules'), join(install, 'node_modules'));
      installBin = join(install, 'bin', 'tollgate.js');
    });
    afterEach(() => {
      rmSync(join(install, '.tollgate'), { recursive: true, force: true });
      rmSync(join(project, '.tollgate'), { recursive: true, force: true });
    });

    it('with no secret anywhere: exit 2, naming both places it looked and how to point it at the server', async () => {
      const r = await token(installBin, ['--sub', 'ann']);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(
        `there is no dev secret at ${join(project, '.tollgate', 'dev-jwt-secret')} nor at ${join(install, '.tollgate', 'dev-jwt-secret')}`,
      );
      expect(r.stderr).toContain('--data-dir DIR or TOLLGATE_DATA_DIR=DIR');
    });

    it('uses the dev secret beside it, where `npm start` in its directory made it, and says so on stderr', async () => {
      writeDevSecret(join(install, '.tollgate'), secret);
      const r = await token(installBin, ['--sub', 'cai', '--role', 'agent']);
      expect(r.code).toBe(0);
      expect(r.stderr).toContain(`signed with the dev secret in ${join(install, '.tollgate')}`);
      expect(await acceptedAs(r.stdout)).toBe('cai');
    });

    it('a .tollgate in the current directory comes first', async () => {
      writeDevSecret(join(install, '.tollgate')); // another server's
      writeDevSecret(join(project, '.tollgate'), secret);
      const r = await token(installBin, ['--sub', 'dan']);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(await acceptedAs(r.stdout)).toBe('dan');
    });
  });

  it('a server started outside the checkout suggests a token command that works as printed, from another directory', async () => {
    // Embedded mode, so the server makes its dev secret; started from a directory of its own with a data dir elsewhere.
    const home = join(scratch, 'ops');
    mkdirSync(home);
    const dataDir = join(scratch, 'ops-data');
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'serve'], {
      cwd: home,
      env: serverEnv({ PORT: String(port), TOLLGATE_DATA_DIR: dataDir, TOLLGATE_GRPC_PORT: 'off' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    try {
      const banner = await new Promise<{ signIn: string }>((resolve, reject) => {
        const look = () => {
          const line = out.split('\n').find((l) => l.includes('Tollgate listening on'));
          if (line) return resolve(JSON.parse(line) as { signIn: string });
          if (child.exitCode !== null) return reject(new Error(`the server exited:\n${out}`));
          setTimeout(look, 100);
        };
        look();
      });
      // Not npx (outside the checkout it would fetch a registry package): this CLI by its path, and the data dir.
      const suggested = /a token: (.+)$/.exec(banner.signIn)?.[1];
      expect(suggested).toBe(`node ${BIN} token --sub alice --role approver --data-dir ${dataDir}`);
      const minted = spawnSync('/bin/sh', ['-c', suggested!], {
        cwd: project,
        env: { PATH: process.env.PATH, HOME: scratch },
        encoding: 'utf8',
      });
      expect(minted.status).toBe(0);
      const me = await fetch(`http://127.0.0.1:${port}/v1/me`, {
        headers: { authorization: `Bearer ${minted.stdout.trim()}` },
      });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { id: string }).id).toBe('alice');
    } finally {
      child.kill('SIGTERM');
      await exited(child);
    }
  }, 90_000);

  /** `node <bin> token …` in the user's project, with no Tollgate settings but those given. */
  function token(bin: string, args: string[], env: Record<string, string> = {}) {
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [bin, 'token', ...args], {
        cwd: project,
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

/** A data dir's dev secret as the server makes it (32 random bytes, base64url, mode 0600); answers the secret. */
function writeDevSecret(dir: string, secret = randomBytes(32).toString('base64url')): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'dev-jwt-secret'), `${secret}\n`, { mode: 0o600 });
  return secret;
}
