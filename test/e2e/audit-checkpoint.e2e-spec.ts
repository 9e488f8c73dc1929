/**
 * Verify against a checkpoint kept outside the database (issue 11, finding 15). Someone who can switch the
 * triggers off (the tables' owner, a superuser) can cut events from the end of a tenant's chain and move the
 * head back onto what is left, or re-hash the chain from some event on: the database then holds a chain that is
 * whole in itself, and plain verify passes. A checkpoint saved earlier (`tollgate audit checkpoint > file`)
 * says how far the chain reached and with which hash; `tollgate audit verify --checkpoint FILE` (and
 * `GET /v1/audit/verify?checkpoint=`) must catch both. Exit codes per the CLI: 0 ok, 1 failed, 2 usage.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventsOf, recomputedHash } from '../support/audit';
import { client, Reply } from '../support/http';
import { cliEnv, runCli } from '../support/pty';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
let scratch: string;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
  scratch = mkdtempSync(join(tmpdir(), 'tollgate-checkpoint-'));
});

afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await server?.stop();
});

async function ok(res: Promise<Reply>, status: number): Promise<Reply> {
  const r = await res;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
  return r;
}

/** `n` conversations in `tenant`: one event each. */
async function conversations(tenant: string, prefix: string, n: number): Promise<void> {
  const agent = await server.token('bot', ['agent'], { tenant });
  for (let i = 0; i < n; i++) await ok(http.post('/v1/conversations', agent, { id: `${prefix}-${i}` }), 201);
}

const auditor = (tenant: string) => server.token('audrey', ['auditor'], { tenant });
const file = (name: string, text: string) => {
  const path = join(scratch, name);
  writeFileSync(path, text);
  return path;
};

/**
 * As a superuser who drops the protection first (here: switches the triggers off inside one transaction and
 * back on, ENABLE ALWAYS, so nothing else ever sees them off).
 */
async function asSuperuser(statements: Array<[string, unknown[]]>): Promise<void> {
  const qr = server.dataSource.createQueryRunner();
  await qr.connect();
  try {
    await qr.startTransaction();
    await qr.query(`ALTER TABLE events DISABLE TRIGGER events_no_update_delete`);
    await qr.query(`ALTER TABLE audit_heads DISABLE TRIGGER audit_heads_forward_only`);
    for (const [sql, params] of statements) await qr.query(sql, params);
    await qr.query(`ALTER TABLE events ENABLE ALWAYS TRIGGER events_no_update_delete`);
    await qr.query(`ALTER TABLE audit_heads ENABLE ALWAYS TRIGGER audit_heads_forward_only`);
    await qr.commitTransaction();
  } catch (e) {
    await qr.rollbackTransaction().catch(() => undefined);
    throw e;
  } finally {
    await qr.release();
  }
}

/** Cuts the tenant's chain after `keep` and moves its head back onto the last event left. */
async function truncateTail(tenant: string, keep: number): Promise<void> {
  const [last] = await server.dataSource.query(`SELECT hash FROM events WHERE tenant_id = $1 AND seq = $2`, [
    tenant,
    keep,
  ]);
  await asSuperuser([
    [`DELETE FROM events WHERE tenant_id = $1 AND seq > $2`, [tenant, keep]],
    [`UPDATE audit_heads SET seq = $2, hash = $3 WHERE tenant_id = $1`, [tenant, keep, last.hash]],
  ]);
}

describe('tollgate audit checkpoint / verify --checkpoint', () => {
  const TENANT = 'cp-truncate';
  let env: NodeJS.ProcessEnv;
  let cpFile: string;
  let jwksFile: string;
  let checkpoint: string;

  beforeAll(async () => {
    await conversations(TENANT, 'c', 5);
    env = cliEnv({ url: server.url, token: await auditor(TENANT) });
  });

  it('`audit checkpoint` prints the compact JWS of the head, ready to keep in a file', async () => {
    const r = await runCli(['audit', 'checkpoint'], env);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    checkpoint = r.stdout.trim();
    expect(r.stdout).toBe(`${checkpoint}\n`);
    expect(checkpoint.split('.')).toHaveLength(3);
    cpFile = file('cp.jws', r.stdout);
    jwksFile = file('jwks.json', JSON.stringify((await http.get('/.well-known/jwks.json')).body));
    const json = JSON.parse((await runCli(['audit', 'checkpoint', '--json'], env)).stdout);
    expect(json).toMatchObject({ tenant: TENANT, seq: 5 });
  });

  it('verifies an intact chain against the checkpoint (exit 0), also once the chain has grown past it', async () => {
    const r = await runCli(['audit', 'verify', '--checkpoint', cpFile, '--jwks', jwksFile], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^ok: 5 event\(s\) verify; it still holds the checkpoint of .* \(seq 5, hash [0-9a-f]{12}…\)/,
    );

    await conversations(TENANT, 'more', 3);
    const json = await runCli(['audit', 'verify', '--checkpoint', cpFile, '--json'], env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, checked: 8, checkpoint: { tenant: TENANT, seq: 5 } });
  });

  it('catches a tail cut off with the head moved back, which plain verify cannot see (exit 1)', async () => {
    await truncateTail(TENANT, 3);
    expect(
      await server.dataSource.query(`SELECT seq::int AS seq FROM audit_heads WHERE tenant_id = $1`, [TENANT]),
    ).toEqual([{ seq: 3 }]);

    const plain = await runCli(['audit', 'verify'], env);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^ok: 3 event\(s\) verify/);

    const r = await runCli(['audit', 'verify', '--checkpoint', cpFile], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^FAILED at seq 4: the checkpoint of .* vouches for events up to seq 5, but the chain now ends at seq 3/,
    );
    expect(r.stderr).toMatch(/^tollgate: the audit trail does not verify \(first bad seq 4\)/);

    const api = await http.get(`/v1/audit/verify?checkpoint=${checkpoint}`, await auditor(TENANT));
    expect(api.status).toBe(200);
    expect(api.body).toMatchObject({ ok: false, checked: 3, firstBadSeq: 4, checkpoint: { tenant: TENANT, seq: 5 } });
  });

  it('refuses a checkpoint whose signature the pinned keys do not verify (exit 1), before asking the server', async () => {
    const [h, , s] = checkpoint.split('.');
    const payload = JSON.parse(Buffer.from(checkpoint.split('.')[1], 'base64url').toString('utf8'));
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, seq: 3 })).toString('base64url')}.${s}`;
    const forgedFile = file('forged.jws', forged);
    const pinned = await runCli(['audit', 'verify', '--checkpoint', forgedFile, '--jwks', jwksFile], env);
    expect(pinned.code).toBe(1);
    expect(pinned.stderr).toMatch(/signature does not verify with the keys pinned in/);
    expect(pinned.stdout).toBe('');

    // The server checks the signature too.
    const r = await runCli(['audit', 'verify', '--checkpoint', forgedFile, '--json'], env);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/signature does not verify/),
    });
  });

  it('answers usage errors with exit 2: no such file, not a checkpoint, --jwks alone', async () => {
    expect((await runCli(['audit', 'verify', '--checkpoint', join(scratch, 'nope.jws')], env)).code).toBe(2);
    expect((await runCli(['audit', 'verify', '--checkpoint', file('junk.txt', 'hello')], env)).code).toBe(2);
    expect((await runCli(['audit', 'verify', '--jwks', jwksFile], env)).code).toBe(2);
  });
});

describe('a chain re-hashed from an event on, head included', () => {
  it('passes plain verify and fails against the checkpoint: the event no longer has its hash', async () => {
    const tenant = 'cp-rewrite';
    await conversations(tenant, 'c', 4);
    const token = await auditor(tenant);
    const cp = (await ok(http.get('/v1/audit/checkpoint', token, { accept: 'application/json' }), 200)).body;
    expect(cp).toMatchObject({ seq: 4 });

    const rows = await eventsOf(server.dataSource, tenant);
    const statements: Array<[string, unknown[]]> = [];
    let prev = rows[0].hash;
    for (const row of rows.slice(1)) {
      const data = Number(row.seq) === 2 ? { ...row.data, title: 'rewritten' } : row.data;
      const hash = recomputedHash({ ...row, data, prev_hash: prev });
      statements.push([
        `UPDATE events SET data = $3::jsonb, prev_hash = $4, hash = $5 WHERE tenant_id = $1 AND seq = $2`,
        [tenant, row.seq, JSON.stringify(data), prev, hash],
      ]);
      prev = hash;
    }
    statements.push([`UPDATE audit_heads SET hash = $2 WHERE tenant_id = $1`, [tenant, prev]]);
    await asSuperuser(statements);

    expect((await http.get('/v1/audit/verify', token)).body).toEqual({ ok: true, checked: 4 });
    const r = await http.get(`/v1/audit/verify?checkpoint=${cp.jws}`, token);
    expect(r.body).toMatchObject({
      ok: false,
      checked: 4,
      firstBadSeq: 4,
      problem: expect.stringMatching(/no longer has the hash/),
    });
  });
});

describe('GET /v1/audit/verify?checkpoint=', () => {
  it('answers 400 validation_failed for what is not a checkpoint of the tenant: junk, a receipt, another tenant’s', async () => {
    const tenant = 'cp-input';
    await conversations(tenant, 'c', 1);
    const token = await auditor(tenant);
    const junk = await http.get('/v1/audit/verify?checkpoint=not-a-jws', token);
    expect(junk.status).toBe(400);
    expect(junk.body).toMatchObject({ code: 'validation_failed' });
    const twice = await http.get('/v1/audit/verify?checkpoint=a.b.c&checkpoint=a.b.c', token);
    expect(twice.status).toBe(400);

    // An execution receipt is signed with the same key, but it is not a checkpoint.
    const agent = await server.token('bot', ['agent'], { tenant });
    const approver = await server.token('alice', ['approver'], { tenant });
    const step = await ok(
      http.post('/v1/conversations/c-0/tool-calls', agent, { toolCalls: [{ toolName: 'send_x', arguments: {} }] }),
      201,
    );
    await ok(http.post(`/v1/tool-calls/${step.body.toolCalls[0].id}/decision`, approver, { decision: 'approve' }), 200);
    const receipt = (await ok(http.post(`/v1/tool-calls/${step.body.toolCalls[0].id}/execution`, agent), 200)).body
      .receipt;
    const asCheckpoint = await http.get(`/v1/audit/verify?checkpoint=${receipt}`, token);
    expect(asCheckpoint.status).toBe(400);
    expect(asCheckpoint.body.detail).toMatch(/not an audit checkpoint/);

    const other = (
      await ok(http.get('/v1/audit/checkpoint', await auditor('cp-other'), { accept: 'application/json' }), 200)
    ).body;
    const cross = await http.get(`/v1/audit/verify?checkpoint=${other.jws}`, token);
    expect(cross.status).toBe(400);
    expect(cross.body.detail).toMatch(/another tenant/);
  });

  it('accepts a checkpoint whose event a retention purge removed, when the purge recorded that hash', async () => {
    const tenant = 'cp-purge';
    await conversations(tenant, 'c', 4);
    const token = await auditor(tenant);
    const cp = (await ok(http.get('/v1/audit/checkpoint', token, { accept: 'application/json' }), 200)).body;
    // Age the first four events by a year (as the retention test does), then purge them.
    await asSuperuser([[`UPDATE events SET at = at - interval '1 year' WHERE tenant_id = $1`, [tenant]]]);
    await conversations(tenant, 'after', 1);
    const admin = await server.token('ann', ['admin'], { tenant });
    const purged = await ok(
      http.post('/v1/audit/purge', admin, {
        before: new Date(Date.now() - 200 * 24 * 3600 * 1000).toISOString(),
        reason: 'retention',
      }),
      200,
    );
    expect(purged.body).toMatchObject({ purgedCount: 4, lastPurgedSeq: 4 });

    const r = await http.get(`/v1/audit/verify?checkpoint=${cp.jws}`, token);
    expect(r.body).toMatchObject({ ok: true, checked: 2, checkpoint: { seq: 4, hash: cp.hash, purged: true } });
  });
});
