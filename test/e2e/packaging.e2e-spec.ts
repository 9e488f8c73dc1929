import { ChildProcess, execSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, relative } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { freshDatabase, TestDatabase } from '../support/database';
import { exited, freePort } from '../support/process';
import { healthClient } from '../support/grpc';
import { TEST_SECRET } from '../support/server';
import { eventually } from '../support/wait';

/**
 * The container files, kept true without a Docker engine. The Dockerfile's build stage runs as a shell script in
 * a clean copy of the repository; its runtime stage is put together from what that stage copies; the image's CMD
 * and HEALTHCHECK then run against a fresh database. compose.yaml is checked against the Dockerfile and config.ts.
 *
 * The copy is the committed tree (other work in progress in the checkout stays out of it) with the working
 * copies of the container files (a change to them is tested before it is committed), filtered by .dockerignore.
 */
const ROOT = join(__dirname, '..', '..');
const CONTAINER_FILES = ['Dockerfile', '.dockerignore', 'compose.yaml', 'LICENSE'];
const MINUTE = 60_000;

// ---- A small Dockerfile reader: the instructions this Dockerfile uses, and a refusal for any other. ----

interface Copy {
  from?: string;
  sources: string[];
  dest: string;
}

interface Stage {
  image: string;
  name?: string;
  workdir: string;
  env: Record<string, string>;
  steps: (
    | { kind: 'run'; script: string; workdir: string; env: Record<string, string> }
    | ({ kind: 'copy'; workdir: string } & Copy)
  )[];
  user?: string;
  expose: string[];
  volumes: string[];
  cmd?: string[];
  healthcheck?: string[];
}

/** Joins continued lines and drops comments, as Docker's parser does. */
export function instructions(dockerfile: string): { op: string; args: string }[] {
  const out: { op: string; args: string }[] = [];
  let current = '';
  for (const line of dockerfile.split('\n')) {
    if (/^\s*#/.test(line)) continue;
    if (/\\\s*$/.test(line)) {
      current += line.replace(/\\\s*$/, ' ');
      continue;
    }
    current += line;
    const m = /^\s*(\w+)\s+([\s\S]*?)\s*$/.exec(current);
    if (m) out.push({ op: m[1].toUpperCase(), args: m[2] });
    current = '';
  }
  return out;
}

function execForm(args: string): string[] {
  if (!args.startsWith('[')) return ['/bin/sh', '-c', args];
  return JSON.parse(args) as string[];
}

export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const { op, args } of instructions(text)) {
    if (op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (!m) throw new Error(`FROM ${args}: not understood`);
      stages.push({ image: m[1], name: m[2], workdir: '/', env: {}, steps: [], expose: [], volumes: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`${op} before FROM`);
    switch (op) {
      case 'WORKDIR':
        stage.workdir = posix.resolve(stage.workdir, args);
        break;
      case 'ENV':
        for (const m of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g))
          stage.env[m[1]] = m[2].replace(/^"|"$/g, '');
        break;
      case 'RUN':
        if (args.startsWith('[') || args.startsWith('--'))
          throw new Error(`RUN ${args}: only the shell form without flags is read here`);
        stage.steps.push({ kind: 'run', script: args, workdir: stage.workdir, env: { ...stage.env } });
        break;
      case 'COPY': {
        const words = args.split(/\s+/);
        const flags = words.filter((w) => w.startsWith('--'));
        const paths = words.filter((w) => !w.startsWith('--'));
        for (const f of flags) if (!/^--(from|chown)=/.test(f)) throw new Error(`COPY ${f}: not understood`);
        if (paths.some((p) => /[*?[]/.test(p))) throw new Error(`COPY ${args}: wildcards are not read here`);
        const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
        stage.steps.push({
          kind: 'copy',
          workdir: stage.workdir,
          from,
          sources: paths.slice(0, -1),
          dest: paths.at(-1)!,
        });
        break;
      }
      case 'USER':
        stage.user = args;
        break;
      case 'EXPOSE':
        stage.expose.push(...args.split(/\s+/));
        break;
      case 'VOLUME':
        stage.volumes.push(...(args.startsWith('[') ? (JSON.parse(args) as string[]) : args.split(/\s+/)));
        break;
      case 'CMD':
        stage.cmd = execForm(args);
        break;
      case 'HEALTHCHECK': {
        const m = /^(?:--\S+\s+)*CMD\s+([\s\S]+)$/.exec(args);
        if (!m) throw new Error(`HEALTHCHECK ${args}: not understood`);
        stage.healthcheck = execForm(m[1]);
        break;
      }
      default:
        throw new Error(`${op}: this test does not read that instruction yet; teach it before using it`);
    }
  }
  return stages;
}

// ---- .dockerignore, as Docker reads it (no `!` exceptions: they are refused rather than misread). ----

export function dockerignoreMatcher(text: string): (path: string) => boolean {
  const patterns = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((p) => {
      if (p.startsWith('!')) throw new Error(`.dockerignore: exceptions (${p}) are not read here`);
      const clean = posix.normalize(p).replace(/^\/+|\/+$/g, '');
      const body = clean
        .split(/(\*\*\/?|\*|\?)/)
        .map((part) =>
          part === '**' || part === '**/'
            ? '(?:.*/)?'
            : part === '*'
              ? '[^/]*'
              : part === '?'
                ? '[^/]'
                : part.replace(/[.+^${}()|[\]\\]/g, '\\$&'),
        )
        .join('');
      return new RegExp(`^${body}(?:/.*)?$`); // a matched directory takes everything under it
    });
  return (path) => patterns.some((re) => re.test(path));
}

function removeIgnored(dir: string, ignored: (path: string) => boolean, base = dir): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    const rel = relative(base, full).split('\\').join('/');
    if (ignored(rel)) rmSync(full, { recursive: true, force: true });
    else if (entry.isDirectory()) removeIgnored(full, ignored, base);
  }
}

// ---- Running it. ----

/** What a build step sees: this machine's PATH, HOME and certificates, not the test's own npm or database settings. */
function buildEnv(stageEnv: Record<string, string>): NodeJS.ProcessEnv {
  const keep = /^(npm_config_(cache|registry|userconfig)|https?_proxy|no_proxy)$/i;
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_|^INIT_CWD$|^NODE_ENV$|^DATABASE_URL$|^TOLLGATE_|^PORT$|^HOST$|^JEST_/i.test(k) && !keep.test(k))
      continue;
    env[k] = v;
  }
  // Only speeds the install up here: the cache holds what `npm install` fetched for the checkout.
  return { ...env, ...stageEnv, npm_config_prefer_offline: 'true' };
}

/** The environment the image's processes get: the stage's ENV, what the test sets, and nothing from the test runner. */
function imageEnv(stage: Stage, extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: tmpdir(), ...stage.env };
  for (const [k, v] of Object.entries(extra))
    if (v === undefined) delete env[k];
    else env[k] = v;
  return env;
}

function run(
  argv: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<number> {
  for (let i = 0; i < 450; i++) {
    if (child.exitCode !== null) throw new Error(`the image's CMD exited with ${child.exitCode}:\n${output()}`);
    try {
      const res = await fetch(`${url}/health/ready`);
      if (res.status === 200) return res.status;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`/health/ready never answered 200:\n${output()}`);
}

describe('the container files', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const stages = parseDockerfile(dockerfile);
  const build = stages[0];
  const runtime = stages.at(-1)!;
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
    license: string;
  };
  const compose = parseYaml(readFileSync(join(ROOT, 'compose.yaml'), 'utf8')) as {
    services: Record<
      string,
      {
        image?: string;
        build?: string;
        environment?: Record<string, string>;
        depends_on?: Record<string, { condition: string }>;
        healthcheck?: { test: string[] };
        ports?: string[];
        volumes?: string[];
      }
    >;
    volumes?: Record<string, unknown>;
  };
  const configSource = readFileSync(join(ROOT, 'src', 'infrastructure', 'config', 'config.ts'), 'utf8');

  let work: string;
  let db: TestDatabase;
  let server: ChildProcess | undefined;
  const stageRoot = (s: Stage) => join(work, 'stages', String(stages.indexOf(s)));
  const inStage = (s: Stage, path: string) => join(stageRoot(s), path);
  const runtimeDir = () => inStage(runtime, runtime.workdir);

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'tollgate-packaging-'));
    db = await freshDatabase();
    // The build context: the committed tree, the working container files, less what .dockerignore leaves out.
    const context = join(work, 'context');
    mkdirSync(context);
    execSync(`git archive --format=tar HEAD | tar -x -C '${context}'`, {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    for (const f of CONTAINER_FILES) if (existsSync(join(ROOT, f))) cpSync(join(ROOT, f), join(context, f));
    removeIgnored(context, dockerignoreMatcher(readFileSync(join(context, '.dockerignore'), 'utf8')));

    for (const stage of stages) {
      for (const step of stage.steps) {
        const cwd = inStage(stage, step.workdir);
        mkdirSync(cwd, { recursive: true });
        if (step.kind === 'copy') {
          const srcRoot = step.from
            ? stageRoot(stages.find((s) => s.name === step.from) ?? stages[Number(step.from)])
            : context;
          const destIsDir = step.dest.endsWith('/') || step.dest === '.' || step.sources.length > 1;
          const dest = inStage(stage, posix.resolve(step.workdir, step.dest));
          for (const source of step.sources) {
            const from = step.from ? join(srcRoot, posix.resolve('/', source)) : join(srcRoot, posix.normalize(source));
            if (!existsSync(from))
              throw new Error(`COPY ${source}: not in ${step.from ? `stage ${step.from}` : 'the build context'}`);
            // A directory's contents are copied, not the directory itself; a file goes into a directory destination.
            const target = !statSync(from).isDirectory() && destIsDir ? join(dest, posix.basename(source)) : dest;
            cpSync(from, target, { recursive: true, verbatimSymlinks: true });
          }
        } else if (stage === build) {
          const { code, output } = await run(['/bin/sh', '-c', step.script], cwd, buildEnv(step.env), 12 * MINUTE);
          if (code !== 0) throw new Error(`RUN ${step.script} exited with ${code}:\n${output.slice(-4000)}`);
        }
        // The runtime stage's RUN steps prepare the image's own file system (the data directory and its owner);
        // they are checked below instead of run on this machine.
      }
    }
  }, 15 * MINUTE);

  afterAll(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGKILL');
      await exited(server);
    }
    await db?.drop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("is a two-stage build whose runtime image runs npm start's command as an unprivileged user", () => {
    expect(stages).toHaveLength(2);
    expect(build.name).toBeDefined();
    expect(build.steps.some((s) => s.kind === 'run' && /\bnpm install\b/.test(s.script))).toBe(true);
    expect(build.steps.some((s) => s.kind === 'run' && /\bnpm ci\b/.test(s.script))).toBe(false);
    // The Node that package.json's engines ask for (22 LTS), in its slim image.
    expect(runtime.image).toMatch(/^node:22(\.|-|$).*slim/);
    expect(build.image).toMatch(/^node:22(\.|-|$)/);
    expect(runtime.user).toBeDefined();
    expect(['root', '0']).not.toContain(runtime.user);
    // `npm start` without its prestart rebuild: the image is already built.
    expect(runtime.cmd!.join(' ')).toBe(pkg.scripts.start);
    expect(runtime.env.HOST).toBe('0.0.0.0');
    expect(runtime.expose).toEqual(expect.arrayContaining([runtime.env.PORT, '8081'])); // HTTP and gRPC
    expect(runtime.volumes).toContain(runtime.env.TOLLGATE_DATA_DIR);
    const runtimeRuns = runtime.steps.filter((s) => s.kind === 'run').map((s) => (s as { script: string }).script);
    expect(runtimeRuns.join('\n')).toContain(runtime.env.TOLLGATE_DATA_DIR);
    expect(runtimeRuns.join('\n')).toContain(`chown ${runtime.user}`);
  });

  it('carries the license package.json names', () => {
    expect(pkg.license).toBe('Apache-2.0');
    const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    expect(license).toContain('Apache License\n                           Version 2.0, January 2004');
    expect(license).toContain('Copyright 2026 The Tollgate Authors');
    expect(existsSync(join(runtimeDir(), 'LICENSE'))).toBe(true);
  });

  it('builds dist/ in the build stage and leaves only production dependencies for the runtime image', () => {
    const app = inStage(build, build.workdir);
    for (const f of [
      'dist/src/adapters/cli/main.js',
      'dist/src/server.js',
      'dist/migrations/index.js',
      'dist/web/index.html',
    ]) {
      expect(existsSync(join(app, f))).toBe(true);
    }
    expect(existsSync(join(runtimeDir(), 'proto', 'tollgate', 'v1', 'tollgate.proto'))).toBe(true);
    for (const dev of ['jest', 'supertest', '@nestjs/testing', 'playwright-core'])
      expect(existsSync(join(runtimeDir(), 'node_modules', dev))).toBe(false);
    expect(existsSync(join(runtimeDir(), 'node_modules', '@nestjs', 'core'))).toBe(true);
  });

  it('runs the CLI from the runtime image', async () => {
    const { code, output } = await run(
      [process.execPath, 'bin/tollgate.js', '--help'],
      runtimeDir(),
      imageEnv(runtime, {}),
      MINUTE,
    );
    expect(code).toBe(0);
    expect(output).toMatch(/^\s+serve\b/m);
  });

  it(
    'starts with its CMD and answers /health/ready; its HEALTHCHECK passes while it runs and fails once it stops',
    async () => {
      const port = String(await freePort());
      const grpcPort = String(await freePort());
      const dataDir = inStage(runtime, runtime.env.TOLLGATE_DATA_DIR); // what the runtime stage's RUN makes
      mkdirSync(dataDir, { recursive: true });
      const env = imageEnv(runtime, {
        PORT: port,
        TOLLGATE_GRPC_PORT: grpcPort,
        TOLLGATE_DATA_DIR: db.url ? dataDir : db.dataDir,
        DATABASE_URL: db.url,
        TOLLGATE_JWT_SECRET: db.url ? TEST_SECRET : undefined,
      });
      const cmd = runtime.cmd!;
      const child = spawn(cmd[0] === 'node' ? process.execPath : cmd[0], cmd.slice(1), {
        cwd: runtimeDir(),
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      server = child;
      let out = '';
      child.stdout!.on('data', (d) => (out += d));
      child.stderr!.on('data', (d) => (out += d));
      expect(await waitReady(`http://127.0.0.1:${port}`, child, () => out)).toBe(200);
      // gRPC too: its proto file is found beside dist/ in the image.
      const health = healthClient(`127.0.0.1:${grpcPort}`);
      expect(
        await eventually(() => health.check('tollgate.v1.Tollgate').catch(() => undefined), MINUTE, 'gRPC health'),
      ).toBe('SERVING');
      health.close();

      const healthcheck = runtime.healthcheck!;
      const check = () =>
        run(
          [healthcheck[0] === 'node' ? process.execPath : healthcheck[0], ...healthcheck.slice(1)],
          runtimeDir(),
          env,
          MINUTE,
        );
      expect(await check()).toEqual({ code: 0, output: '' });

      child.kill('SIGTERM');
      expect(await exited(child)).toBe(0);
      expect((await check()).code).toBe(1);
    },
    3 * MINUTE,
  );

  it('has a compose.yaml whose Tollgate waits for a healthy PostgreSQL and is configured by names config.ts reads', () => {
    const { db: pg, tollgate } = compose.services;
    expect(pg.image).toMatch(/^postgres:1[5-8]\b/);
    expect(pg.healthcheck?.test.join(' ')).toMatch(/pg_isready/);
    const volume = pg.volumes?.[0].split(':')[0];
    expect(Object.keys(compose.volumes ?? {})).toContain(volume);
    expect(tollgate.build).toBe('.');
    expect(tollgate.depends_on?.db.condition).toBe('service_healthy');
    const env = tollgate.environment!;
    for (const name of Object.keys(env)) expect(configSource).toMatch(new RegExp(`env\\.${name}\\b`));
    const url = new URL(env.DATABASE_URL);
    expect(url.hostname).toBe('db');
    expect(url.username).toBe(pg.environment?.POSTGRES_USER);
    expect(decodeURIComponent(url.password)).toBe(pg.environment?.POSTGRES_PASSWORD);
    expect(url.pathname).toBe(`/${pg.environment?.POSTGRES_DB}`);
    // HTTP on the image's PORT and gRPC on its default port beside it (8081 when nothing sets TOLLGATE_GRPC_PORT).
    expect(runtime.env.TOLLGATE_GRPC_PORT ?? env.TOLLGATE_GRPC_PORT).toBeUndefined();
    expect(tollgate.ports?.map((p) => p.split(':').at(-1))).toEqual([runtime.env.PORT, '8081']);
    // Published on the host's loopback only: an operator opens them wider on purpose.
    for (const p of tollgate.ports ?? []) expect(p).toMatch(/^127\.0\.0\.1:/);
  });

  it("refuses to start with compose.yaml's placeholder secret, naming the setting to change", async () => {
    const env = compose.services.tollgate.environment!;
    // Compose's ${NAME:-default}: the default when the operator sets nothing.
    const interpolated = Object.fromEntries(
      Object.entries(env).map(([k, v]) => [k, v.replace(/\$\{\w+:-([^}]*)\}/g, '$1')]),
    );
    expect(interpolated.TOLLGATE_JWT_SECRET).not.toContain('$');
    const cmd = runtime.cmd!;
    const { code, output } = await run(
      [process.execPath, ...cmd.slice(1)],
      runtimeDir(),
      imageEnv(runtime, { ...interpolated, PORT: String(await freePort()) }),
      MINUTE,
    );
    expect(code).toBe(2);
    expect(output).toMatch(/TOLLGATE_JWT_SECRET is \d+ bytes?: HS256 needs at least 32 bytes/);
  });
});

describe('dockerignoreMatcher', () => {
  it('matches as Docker does: from the context root, a directory with everything under it, ** across directories', () => {
    const ignored = dockerignoreMatcher('# comment\nnode_modules\n/dist/\n*.log\ndocs/**/*.png\n');
    expect(
      ['node_modules', 'node_modules/x/y.js', 'dist/web/index.html', 'a.log', 'docs/img/x.png', 'docs/x.png'].filter(
        ignored,
      ),
    ).toHaveLength(6);
    expect(['src/a.log', 'src/node_modules.ts', 'distant', 'docs/x.md'].filter(ignored)).toEqual([]);
  });

  it('refuses exceptions rather than misread them', () => {
    expect(() => dockerignoreMatcher('docs\n!docs/API.md')).toThrow(/exceptions/);
  });
});
