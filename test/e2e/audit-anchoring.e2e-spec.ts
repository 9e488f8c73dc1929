/**
 * Audit anchoring without a cron job (issue 28, part 8). The service signs a checkpoint of each tenant's chain
 * with new events every TOLLGATE_CHECKPOINT_INTERVAL and writes it outside the database: a directory (one file
 * per checkpoint, `latest` per tenant) or an http(s) endpoint through the webhooks' egress guard. Verify without
 * `checkpoint` uses the latest in the file sink, so a tail cut by a superuser (events deleted, the head moved
 * back: plain verify passes) is reported. Runs on PostgreSQL and the embedded database alike.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointScheduler } from '../../src/adapters/audit-anchoring/checkpoint-scheduler';
import { peekClaims } from '../../src/adapters/audit-anchoring/checkpoint-sinks';
import { client } from '../support/http';
import { cliEnv, runCli } from '../support/pty';
import { startTestServer, TestServer } from '../support/server';
import { eventually } from '../support/wait';

jest.setTimeout(120_000);

/** Cuts the tenant's chain after `keep` and moves its head back onto the last event left, as a superuser can. */
async function truncateTail(server: TestServer, tenant: string, keep: number): Promise<void> {
  const [last] = await server.dataSource.query(`SELECT hash FROM events WHERE tenant_id = $1 AND seq = $2`, [
    tenant,
    keep,
  ]);
  const qr = server.dataSource.createQueryRunner();
  await qr.connect();
  try {
    await qr.startTransaction();
    await qr.query(`ALTER TABLE events DISABLE TRIGGER events_no_update_delete`);
    await qr.query(`ALTER TABLE audit_heads DISABLE TRIGGER audit_heads_forward_only`);
    await qr.query(`DELETE FROM events WHERE tenant_id = $1 AND seq > $2`, [tenant, keep]);
    await qr.query(`UPDATE audit_heads SET seq = $2, hash = $3 WHERE tenant_id = $1`, [tenant, keep, last.hash]);
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

/** The claims of a checkpoint file, once it is there. */
function claimsIn(path: string): ReturnType<typeof peekClaims> {
  try {
    return peekClaims(readFileSync(path, 'utf8').trim());
  } catch {
    return undefined;
  }
}

async function conversations(server: TestServer, tenant: string, prefix: string, n: number): Promise<void> {
  const http = client(server.url);
  const agent = await server.token('bot', ['agent'], { tenant });
  for (let i = 0; i < n; i++)
    expect((await http.post('/v1/conversations', agent, { id: `${prefix}-${i}` })).status).toBe(201);
}

describe('a file sink: checkpoints on a schedule, verify with the latest', () => {
  let server: TestServer;
  let dir: string;
  const TENANT = 'anchored';
  const OTHER = 'anchored-too';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-anchors-'));
    server = await startTestServer({
      checkpoints: { intervalMs: 1000, sink: { kind: 'file', dir, implicit: false } },
    });
  });

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const latestSeq = (tenant: string): number | undefined => claimsIn(join(dir, tenant, 'latest'))?.seq;

  it('writes a checkpoint per tenant with new events: one file each, and latest', async () => {
    await conversations(server, TENANT, 'c', 6);
    await conversations(server, OTHER, 'o', 2);
    await eventually(() => (latestSeq(TENANT) === 6 ? true : undefined), 30_000, 'a checkpoint at seq 6');
    await eventually(() => (latestSeq(OTHER) === 2 ? true : undefined), 30_000, "the other tenant's checkpoint");
    const files = readdirSync(join(dir, TENANT));
    expect(files).toContain('latest');
    expect(files.filter((f) => /^\d{8}T\d{6}\.\d{3}Z-\d+\.jws$/.test(f)).length).toBeGreaterThanOrEqual(1);
    expect(files.filter((f) => f.startsWith('.tmp-'))).toEqual([]);
  });

  it('verify without a checkpoint uses the latest in the sink and names it', async () => {
    const http = client(server.url);
    const auditor = await server.token('audrey', ['auditor'], { tenant: TENANT });
    const r = await http.get('/v1/audit/verify', auditor);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      ok: true,
      checkpoint: { tenant: TENANT, seq: 6, source: 'sink', name: expect.stringMatching(/-6\.jws$/) },
    });
  });

  it('tollgate audit verify says which checkpoint of the sink it used (built CLI)', async () => {
    const env = cliEnv({ url: server.url, token: await server.token('audrey', ['auditor'], { tenant: TENANT }) });
    const r = await runCli(['audit', 'verify'], env);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(
      /^ok: 6 event\(s\) verify; it still holds the latest checkpoint in the sink, \d{8}T\d{6}\.\d{3}Z-6\.jws \(.*, seq 6, hash [0-9a-f]{12}…\)/,
    );
  });

  it('a run with no new events writes nothing; new events are anchored by the next', async () => {
    const scheduler = server.app.get(CheckpointScheduler);
    await conversations(server, TENANT, 'd', 2);
    await eventually(() => (latestSeq(TENANT) === 8 ? true : undefined), 30_000, 'a checkpoint at seq 8');
    const run = await scheduler.run(); // whatever the timer did meanwhile, nothing is new now
    expect(run.written).toEqual([]);
  });

  it('reports a tail cut by a superuser, which plain verify of the database alone cannot see', async () => {
    const http = client(server.url);
    const auditor = await server.token('audrey', ['auditor'], { tenant: TENANT });
    await truncateTail(server, TENANT, 5);
    const r = await http.get('/v1/audit/verify', auditor);
    expect(r.body).toMatchObject({
      ok: false,
      firstBadSeq: 6,
      problem: expect.stringContaining('events were removed from its end'),
      checkpoint: { seq: 8, source: 'sink' },
    });
    const cli = await runCli(
      ['audit', 'verify'],
      cliEnv({ url: server.url, token: await server.token('audrey', ['auditor'], { tenant: TENANT }) }),
    );
    expect(cli.code).toBe(1);
    expect(cli.stdout).toMatch(
      /^FAILED at seq 6: the latest checkpoint in the sink, \S+-8\.jws: .*removed from its end/,
    );
    // The scheduler does not sign over the cut chain: latest stays where it was.
    const run = await server.app.get(CheckpointScheduler).run();
    expect(run.refused).toContain(TENANT);
    expect(latestSeq(TENANT)).toBe(8);
    // The tenant wall: the other tenant verifies against its own checkpoint, untouched.
    const other = await server.token('audrey', ['auditor'], { tenant: OTHER });
    expect((await http.get('/v1/audit/verify', other)).body).toMatchObject({
      ok: true,
      checkpoint: { tenant: OTHER, source: 'sink' },
    });
  });

  it('a tenant with no checkpoint yet verifies without one, as without a sink', async () => {
    const http = client(server.url);
    const auditor = await server.token('audrey', ['auditor'], { tenant: 'never-anchored' });
    const r = await http.get('/v1/audit/verify', auditor);
    expect(r.body).toEqual({ ok: true, checked: 0 });
  });
});

describe('the default sink', () => {
  let server: TestServer;
  afterAll(() => server?.stop());

  it('is a directory in the data dir on the embedded database, and off beside DATABASE_URL', async () => {
    server = await startTestServer({ checkpoints: { intervalMs: 1000, sink: { kind: 'default' } } });
    await conversations(server, 'dflt', 'c', 1);
    const http = client(server.url);
    const auditor = await server.token('audrey', ['auditor'], { tenant: 'dflt' });
    if (server.config.databaseUrl) {
      expect((await http.get('/v1/audit/verify', auditor)).body).toEqual({ ok: true, checked: 1 });
      expect(await server.app.get(CheckpointScheduler).run()).toEqual({ written: [], failed: [], refused: [] });
    } else {
      const latest = join(server.config.dataDir, 'checkpoints', 'dflt', 'latest');
      await eventually(() => claimsIn(latest), 30_000, 'a checkpoint in the data dir');
      expect((await http.get('/v1/audit/verify', auditor)).body).toMatchObject({
        ok: true,
        checkpoint: { source: 'sink' },
      });
    }
  });
});

describe('an http(s) sink, through the egress guard', () => {
  let receiver: Server;
  let url: string;
  const bodies: Array<{ type?: string; body: string }> = [];
  let allowed: TestServer;
  let refused: TestServer;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        bodies.push({ type: req.headers['content-type'], body });
        res.statusCode = 201;
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/anchors`;
  });

  afterAll(async () => {
    await allowed?.stop();
    await refused?.stop();
    await new Promise((r) => receiver.close(r));
  });

  it('POSTs each checkpoint as application/jose where the allow-list lets it; verify then needs it passed', async () => {
    allowed = await startTestServer({ checkpoints: { intervalMs: 1000, sink: { kind: 'http', url } } });
    await conversations(allowed, 'posted', 'c', 3);
    const got = await eventually(
      () => bodies.find((b) => peekClaims(b.body)?.seq === 3),
      30_000,
      'a POSTed checkpoint',
    );
    expect(got.type).toBe('application/jose');
    expect(peekClaims(got.body)).toMatchObject({ tenant: 'posted', seq: 3 });
    const http = client(allowed.url);
    const auditor = await allowed.token('audrey', ['auditor'], { tenant: 'posted' });
    expect((await http.get('/v1/audit/verify', auditor)).body).toMatchObject({
      ok: true,
      noCheckpoint: expect.stringContaining('pass checkpoint='),
    });
    const passed = await http.get(`/v1/audit/verify?checkpoint=${encodeURIComponent(got.body)}`, auditor);
    expect(passed.body).toMatchObject({ ok: true, checkpoint: { seq: 3, source: 'request' } });
  });

  it('sends nothing to a loopback endpoint the operator did not allow, and reports the run as failed', async () => {
    refused = await startTestServer({
      checkpoints: { intervalMs: 3_600_000, sink: { kind: 'http', url } },
      webhooks: { retryBaseMs: 5000, maxAttempts: 10, timeoutMs: 5000, allowPrivate: [] },
    });
    await conversations(refused, 'not-posted', 'c', 2);
    const before = bodies.length;
    const run = await refused.app.get(CheckpointScheduler).run();
    expect(run.failed).toContain('not-posted');
    expect(bodies.slice(before).filter((b) => peekClaims(b.body)?.tenant === 'not-posted')).toEqual([]);
  });
});
