import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { client } from '../support/http';
import { cliEnv, runCli } from '../support/pty';
import { startTestServer, TestServer } from '../support/server';

/** `tollgate policy versions|rollback|diff` against a real server: output, `--json`, exit codes. */
describe('tollgate policy versions, rollback and diff', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let scratch: string;
  let ann: string;
  let bea: string;
  let audrey: string;
  let agent: string;
  const as = (token: string) => cliEnv({ url: server.url, token });
  const STRICT = 'rules:\n  - match: "get_*"\n    level: automatic\n  - match: "delete_*"\n    level: deny\n';
  const LAX = 'rules:\n  - match: "*"\n    level: automatic\n';

  beforeAll(async () => {
    server = await startTestServer();
    api = client(server.url);
    scratch = mkdtempSync(join(tmpdir(), 'tollgate-cli-policy-'));
    ann = await server.token('ann', ['admin'], { name: 'Ann' });
    bea = await server.token('bea', ['approver']);
    audrey = await server.token('audrey', ['auditor']);
    agent = await server.token('bot', ['agent']);
    writeFileSync(join(scratch, 'strict.yaml'), STRICT);
    writeFileSync(join(scratch, 'lax.yaml'), LAX);
    expect((await runCli(['policy', 'apply', join(scratch, 'strict.yaml')], as(ann))).code).toBe(0);
    expect((await runCli(['policy', 'apply', join(scratch, 'lax.yaml')], as(ann))).code).toBe(0);
  });
  afterAll(async () => {
    rmSync(scratch, { recursive: true, force: true });
    await server?.stop();
  });

  it('versions prints the history newest first as a table, or --json', async () => {
    const t = await runCli(['policy', 'versions'], as(bea));
    expect(t.code).toBe(0);
    const lines = t.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^VERSION\s+CREATED\s+BY\s+RULES$/);
    expect(lines.slice(1).map((l) => l.replace(/\s+\S+Z\s+/, ' ').replace(/\s+/g, ' '))).toEqual([
      '2 (in force) ann 1',
      '1 ann 2',
    ]);
    const j = await runCli(['policy', 'versions', '--json'], as(audrey));
    expect(JSON.parse(j.stdout).items.map((v: { version: number }) => v.version)).toEqual([2, 1]);
  });

  it('diff exits 0 when the file matches, 1 with a unified diff when it differs, and compares with --against N', async () => {
    const same = await runCli(['policy', 'diff', join(scratch, 'lax.yaml')], as(bea));
    expect(same).toMatchObject({ code: 0, stdout: `${join(scratch, 'lax.yaml')} matches version 2 (in force)\n` });

    const different = await runCli(['policy', 'diff', join(scratch, 'strict.yaml')], as(bea));
    expect(different.code).toBe(1);
    expect(different.stdout).toMatch(
      new RegExp(
        `^--- version 2 \\(in force\\)\\n\\+\\+\\+ ${join(scratch, 'strict.yaml').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\n@@ `,
      ),
    );
    expect(different.stdout).toContain('\n-  - match: "*"\n');
    expect(different.stdout).toContain('\n+  - match: delete_*\n+    level: deny\n');

    const against = await runCli(['policy', 'diff', join(scratch, 'strict.yaml'), '--against', '1', '--json'], as(bea));
    expect(against.code).toBe(0);
    expect(JSON.parse(against.stdout)).toEqual({ equal: true, against: 1, diff: '' });

    const stdin = await runCli(['policy', 'diff', '-'], as(bea), LAX);
    expect(stdin.code).toBe(0);
  });

  it('diff --simulate prints what the candidate would change in the recorded calls', async () => {
    expect((await api.post('/v1/conversations', agent, { id: 'c-sim' })).status).toBe(201);
    expect(
      (
        await api.post('/v1/conversations/c-sim/tool-calls', agent, {
          toolCalls: [{ toolName: 'delete_source', arguments: {} }],
        })
      ).body.toolCalls[0].status,
    ).toBe('approved');
    const r = await runCli(['policy', 'diff', join(scratch, 'strict.yaml'), '--simulate', '--days', '1'], as(ann));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /Simulated against 1 recorded call proposed since \S+: 1 would change\.\nTHEN\s+NOW\s+CALLS\nautomatic\s+deny\s+1\s+changed\n$/,
    );
    const json = JSON.parse(
      (await runCli(['policy', 'diff', join(scratch, 'strict.yaml'), '--simulate', '--json'], as(audrey))).stdout,
    );
    expect(json.simulation.summary).toEqual({
      total: 1,
      changed: 1,
      transitions: [{ then: 'automatic', now: 'deny', count: 1 }],
    });
  });

  it('diff refuses what cannot be compared with exit 2: an invalid policy, a missing file, --days without --simulate', async () => {
    const bad = join(scratch, 'bad.yaml');
    writeFileSync(bad, 'rules:\n  - match: "x"\n    level: sometimes\n');
    const invalid = await runCli(['policy', 'diff', bad], as(bea));
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/is not a valid policy: rules\[0\]\.level/);
    expect((await runCli(['policy', 'diff', join(scratch, 'missing.yaml')], as(bea))).code).toBe(2);
    expect((await runCli(['policy', 'diff', join(scratch, 'lax.yaml'), '--days', '3'], as(bea))).code).toBe(2);
    const unknown = await runCli(['policy', 'diff', join(scratch, 'lax.yaml'), '--against', '9'], as(bea));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^not_found: /);
  });

  it('rollback N makes a new version with the old document; the version in force, an unknown one and non-admins exit 1', async () => {
    const r = await runCli(['policy', 'rollback', '1', '--reason', 'too lax'], as(ann));
    expect(r).toMatchObject({ code: 0, stdout: 'Policy version 3 applied: the document of version 1 (2 rules)\n' });
    expect((await runCli(['policy', 'diff', join(scratch, 'strict.yaml')], as(bea))).code).toBe(0);
    const events = (await api.get('/v1/audit/events?type=PolicyUpdated', audrey)).body.events;
    expect(events[events.length - 1].data).toMatchObject({
      version: 3,
      source: 'rollback',
      rolledBackFrom: 1,
      reason: 'too lax',
    });

    const again = await runCli(['policy', 'rollback', '3', '--json'], as(ann));
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^already_in_force: /);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 409, code: 'already_in_force' });
    expect((await runCli(['policy', 'rollback', '9'], as(ann))).stderr).toMatch(/^not_found: /);
    expect((await runCli(['policy', 'rollback', '1'], as(bea))).stderr).toMatch(/^forbidden: /);
    expect((await runCli(['policy', 'rollback', 'one'], as(ann))).code).toBe(2);
    expect((await api.get('/v1/policy', ann)).body.version).toBe(3);
  });
});

/** `tollgate policy analyze` against a real server: findings, `--json`, exit codes. */
describe('tollgate policy analyze', () => {
  let server: TestServer;
  let scratch: string;
  let ann: string;
  let audrey: string;
  const as = (token: string) => cliEnv({ url: server.url, token });

  beforeAll(async () => {
    server = await startTestServer();
    scratch = mkdtempSync(join(tmpdir(), 'tollgate-cli-analyze-'));
    ann = await server.token('ann', ['admin']);
    audrey = await server.token('audrey', ['auditor']);
  });
  afterAll(async () => {
    rmSync(scratch, { recursive: true, force: true });
    await server?.stop();
  });

  it('exits 0 when every rule can decide, 1 listing the rules that cannot, or --json', async () => {
    writeFileSync(join(scratch, 'clean.yaml'), 'rules:\n  - match: "get_*"\n    level: automatic\n');
    expect((await runCli(['policy', 'apply', join(scratch, 'clean.yaml')], as(ann))).code).toBe(0);
    expect(await runCli(['policy', 'analyze'], as(audrey))).toMatchObject({
      code: 0,
      stdout: 'Policy version 1: every rule can decide a call.\n',
    });

    writeFileSync(
      join(scratch, 'dead.yaml'),
      'rules:\n  - match: "delete_*"\n    level: deny\n  - match: delete_row\n    level: confirm\n',
    );
    expect((await runCli(['policy', 'apply', join(scratch, 'dead.yaml')], as(ann))).code).toBe(0);
    const found = await runCli(['policy', 'analyse'], as(audrey));
    expect(found.code).toBe(1);
    expect(found.stdout).toContain(
      'never decides  Rule 1 (delete_row, confirm) never decides: rule 0 (delete_*, deny)',
    );
    const json = JSON.parse((await runCli(['policy', 'analyze', '--json'], as(audrey))).stdout);
    expect(json).toMatchObject({ version: 2, findings: [{ kind: 'unreachable', rule: 1, by: 0 }] });
  });
});
