/**
 * Tampering behind the service's back (CONTRACT §9, §11 "Audit"): the triggers keep everyone, owner and
 * superuser included, from changing the events table — unless someone who owns it switches a trigger off
 * first. GET /v1/audit/verify must catch what such a person does: an altered row (data, at, actor), a row
 * deleted from the middle or from the end, and it must keep each tenant's chain to itself. Also: the chain
 * stays whole with gap-free `seq` when two tenants write concurrently.
 */
import { eventsOf, GENESIS, recomputedApiHash, recomputedHash } from '../support/audit';
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});

afterAll(async () => {
  await server?.stop();
});

type Json = any;

async function ok(res: Promise<Reply>, status: number): Promise<Reply> {
  const r = await res;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
  return r;
}

const auditor = (tenant: string) => server.token('audrey', ['auditor'], { tenant });

async function verify(tenant: string): Promise<Json> {
  const res = await http.get('/v1/audit/verify', await auditor(tenant));
  expect(res.status).toBe(200);
  return res.body;
}

async function events(tenant: string): Promise<Json[]> {
  const res = await http.get('/v1/audit/events?limit=1000', await auditor(tenant));
  expect(res.status).toBe(200);
  expect(res.body.nextCursor).toBeNull();
  return res.body.events;
}

/**
 * A small but complete story in `tenant`, through the service: a conversation, a step with a call the
 * policy lets through and one it holds, a person's approval, a run and its result. 9 events.
 */
async function story(tenant: string, convId: string): Promise<void> {
  const agent = await server.token('agent-t', ['agent'], { tenant });
  const approver = await server.token('alice', ['approver'], { tenant });
  const admin = await server.token('root', ['admin'], { tenant });
  await ok(http.put(`/v1/tools/get_x`, admin, { isReadOnly: true }), 201);
  await ok(http.post('/v1/conversations', agent, { id: convId }), 201);
  const step = await ok(
    http.post(`/v1/conversations/${convId}/tool-calls`, agent, {
      toolCalls: [
        { toolName: 'get_x', arguments: { q: 1 } },
        { toolName: 'send_money', arguments: { to: 'bob', amount: 10 } },
      ],
    }),
    201,
  );
  const [auto, held] = step.body.toolCalls;
  expect([auto.status, held.status]).toEqual(['approved', 'pending']);
  await ok(http.post(`/v1/tool-calls/${held.id}/decision`, approver, { decision: 'approve' }), 200);
  await ok(http.post(`/v1/tool-calls/${held.id}/execution`, agent), 200);
  await ok(http.post(`/v1/tool-calls/${held.id}/result`, agent, { outcome: 'succeeded' }), 200);
}

/**
 * What someone owning the table could do: grant itself back the revoked privileges, switch the append-only
 * trigger (and the chain head's) off, change rows, then put both back (the trigger ENABLE ALWAYS, as the migrations left it) — in one
 * transaction, so nothing else ever sees the trigger off. (A superuser needs no grant; an owner does.)
 */
async function behindTheServicesBack(statements: Array<[string, unknown[]]>): Promise<void> {
  const qr = server.dataSource.createQueryRunner();
  await qr.connect();
  try {
    await qr.startTransaction();
    const [{ had }] = await qr.query(
      `SELECT has_table_privilege('events', 'UPDATE') AND has_table_privilege('events', 'DELETE') AS had`,
    );
    await qr.query(`GRANT UPDATE, DELETE ON events TO CURRENT_USER`);
    await qr.query(`ALTER TABLE events DISABLE TRIGGER events_no_update_delete`);
    await qr.query(`ALTER TABLE audit_heads DISABLE TRIGGER audit_heads_forward_only`);
    for (const [sql, params] of statements) {
      await qr.query(sql, params);
    }
    await qr.query(`ALTER TABLE events ENABLE ALWAYS TRIGGER events_no_update_delete`);
    await qr.query(`ALTER TABLE audit_heads ENABLE ALWAYS TRIGGER audit_heads_forward_only`);
    if (!had) await qr.query(`REVOKE UPDATE, DELETE ON events FROM CURRENT_USER`);
    await qr.commitTransaction();
  } catch (e) {
    await qr.rollbackTransaction().catch(() => undefined);
    throw e;
  } finally {
    await qr.release();
  }
}

/** How many rows a tenant's events table holds (to prove the tampering statement did something). */
async function rowCount(tenant: string): Promise<number> {
  const [r] = await server.dataSource.query(`SELECT count(*)::int AS n FROM events WHERE tenant_id = $1`, [tenant]);
  return Number(r.n);
}

const TENANTS = ['t-intact', 't-data', 't-at', 't-actor', 't-delete-middle', 't-delete-last', 't-rehash', 't-rewrite'];
const before: Record<string, Json[]> = {};

describe('verify while the tenant keeps writing', () => {
  it('answers ok every time: events appended during a run are left for the next one', async () => {
    const tenant = 't-live';
    await story(tenant, 'conv-live');
    const agent = await server.token('agent-t', ['agent'], { tenant });
    await ok(http.post('/v1/conversations', agent, { id: 'conv-busy' }), 201);
    const writes = (async () => {
      for (let i = 0; i < 40; i++)
        await ok(
          http.post('/v1/conversations/conv-busy/tool-calls', agent, {
            toolCalls: [{ toolName: 'get_x', arguments: { i } }],
          }),
          201,
        );
    })();
    const results: Json[] = [];
    let done = false;
    void writes.finally(() => (done = true));
    while (!done) results.push(await verify(tenant));
    await writes;
    results.push(await verify(tenant));
    expect(results.length).toBeGreaterThan(1);
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(results[results.length - 1]).toMatchObject({ ok: true, checked: 9 + 1 + 80 });
  });
});

describe('verify against tampering', () => {
  beforeAll(async () => {
    for (const tenant of TENANTS) {
      await story(tenant, `conv-${tenant}`);
      before[tenant] = await events(tenant);
    }
  });

  it('answers {ok: true, checked: N} for an intact chain', async () => {
    for (const tenant of TENANTS) {
      expect(before[tenant]).toHaveLength(9);
      const res = await verify(tenant);
      expect(res).toMatchObject({ ok: true, checked: 9 });
      expect(res.firstBadSeq).toBeUndefined();
    }
  });

  it('leaves the triggers as the migrations made them: enabled ALWAYS', async () => {
    await behindTheServicesBack([]);
    const rows = await server.dataSource.query(
      `SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'events'::regclass AND tgname IN ('events_no_truncate', 'events_no_update_delete') ORDER BY tgname`,
    );
    expect(rows).toEqual([
      { tgname: 'events_no_truncate', tgenabled: 'A' },
      { tgname: 'events_no_update_delete', tgenabled: 'A' },
    ]);
  });

  it('finds a row whose data was changed: firstBadSeq is that row', async () => {
    const tenant = 't-data';
    const target = before[tenant].find((e) => e.type === 'ToolCallProposed' && e.toolName === 'send_money');
    await behindTheServicesBack([
      [
        `UPDATE events SET data = jsonb_set(data, '{arguments,amount}', '10000') WHERE tenant_id = $1 AND seq = $2`,
        [tenant, target.seq],
      ],
    ]);
    const after = await events(tenant);
    expect(after.find((e) => e.seq === target.seq).data.arguments.amount).toBe(10000);
    expect(await verify(tenant)).toMatchObject({ ok: false, firstBadSeq: target.seq });
  });

  it('finds a row whose time was changed', async () => {
    const tenant = 't-at';
    await behindTheServicesBack([
      [`UPDATE events SET at = at - interval '1 hour' WHERE tenant_id = $1 AND seq = 3`, [tenant]],
    ]);
    expect(await verify(tenant)).toMatchObject({ ok: false, firstBadSeq: 3 });
  });

  it('finds a row whose actor was changed', async () => {
    const tenant = 't-actor';
    const approval = before[tenant].find((e) => e.type === 'ToolCallApproved');
    await behindTheServicesBack([
      [
        `UPDATE events SET actor = jsonb_set(actor, '{id}', '"mallory"') WHERE tenant_id = $1 AND seq = $2`,
        [tenant, approval.seq],
      ],
    ]);
    expect((await events(tenant)).find((e) => e.seq === approval.seq).actor.id).toBe('mallory');
    expect(await verify(tenant)).toMatchObject({ ok: false, firstBadSeq: approval.seq });
  });

  it('finds a row deleted from the middle: firstBadSeq is the missing seq', async () => {
    const tenant = 't-delete-middle';
    await behindTheServicesBack([[`DELETE FROM events WHERE tenant_id = $1 AND seq = 5`, [tenant]]]);
    expect(await rowCount(tenant)).toBe(8);
    expect(await verify(tenant)).toMatchObject({ ok: false, firstBadSeq: 5 });
  });

  it('finds the last row deleted: the chain head no longer matches', async () => {
    const tenant = 't-delete-last';
    await behindTheServicesBack([[`DELETE FROM events WHERE tenant_id = $1 AND seq = 9`, [tenant]]]);
    expect(await rowCount(tenant)).toBe(8);
    // What is left is a well-formed chain of 8: only the head (and the checkpoint) know there were 9.
    const res = await verify(tenant);
    expect(res).toMatchObject({ ok: false, firstBadSeq: 9 });
  });

  it('finds an altered row even when its own hash was recomputed: the next link breaks', async () => {
    const tenant = 't-rehash';
    const rows = await eventsOf(server.dataSource, tenant);
    const row = rows[3];
    const data = { ...row.data, tampered: true };
    const hash = recomputedHash({ ...row, data });
    await behindTheServicesBack([
      [
        `UPDATE events SET data = $3::jsonb, hash = $4 WHERE tenant_id = $1 AND seq = $2`,
        [tenant, row.seq, JSON.stringify(data), hash],
      ],
    ]);
    const res = await verify(tenant);
    expect(res.ok).toBe(false);
    expect([Number(row.seq), Number(row.seq) + 1]).toContain(res.firstBadSeq);
  });

  it('a rewrite of the whole chain from a row on, head included, is what the signed checkpoint is for', async () => {
    const tenant = 't-rewrite';
    const cp = await http.get('/v1/audit/checkpoint', await auditor(tenant), { accept: 'application/json' });
    expect(cp.body).toMatchObject({ tenant, seq: 9, hash: before[tenant][8].hash });

    // Change seq 4 and re-chain everything after it, as someone who knows the algorithm would.
    const rows = await eventsOf(server.dataSource, tenant);
    const statements: Array<[string, unknown[]]> = [];
    let prev = rows[2].hash;
    for (const row of rows.slice(3)) {
      const data = Number(row.seq) === 4 ? { ...row.data, tampered: true } : row.data;
      const hash = recomputedHash({ ...row, data, prev_hash: prev });
      statements.push([
        `UPDATE events SET data = $3::jsonb, prev_hash = $4, hash = $5 WHERE tenant_id = $1 AND seq = $2`,
        [tenant, row.seq, JSON.stringify(data), prev, hash],
      ]);
      prev = hash;
    }
    statements.push([`UPDATE audit_heads SET hash = $2 WHERE tenant_id = $1`, [tenant, prev]]);
    await behindTheServicesBack(statements);

    // The database alone cannot tell; the checkpoint kept outside it can.
    const now = await events(tenant);
    expect(now.every((e) => recomputedApiHash(e) === e.hash)).toBe(true);
    expect(now.find((e) => e.seq === cp.body.seq).hash).not.toBe(cp.body.hash);
  });

  it("keeps other tenants' chains whole: tampering in one touches no other", async () => {
    expect(await verify('t-intact')).toMatchObject({ ok: true, checked: 9 });
    expect(await events('t-intact')).toEqual(before['t-intact']);
    // And a tenant with no events at all verifies as an empty chain.
    expect(await verify('t-nothing-here')).toMatchObject({ ok: true, checked: 0 });
  });

  it('still refuses UPDATE and DELETE once the trigger is back on', async () => {
    await expect(
      server.dataSource.query(`UPDATE events SET data = '{}'::jsonb WHERE tenant_id = 't-intact' AND seq = 1`),
    ).rejects.toThrow();
    await expect(server.dataSource.query(`DELETE FROM events WHERE tenant_id = 't-intact'`)).rejects.toThrow();
    expect(await rowCount('t-intact')).toBe(9);
  });
});

describe('the chain under concurrent writers in two tenants', () => {
  const TENANTS_C = ['conc-a', 'conc-b'];
  const CHAINS = 25; // per tenant: 50 journeys at once, each propose → decide → claim → result

  async function journey(tenant: string, i: number): Promise<void> {
    const agent = await server.token(`agent-${i % 5}`, ['agent'], { tenant });
    const approver = await server.token('alice', ['approver'], { tenant });
    const conv = `c-${i}`;
    await ok(http.post('/v1/conversations', agent, { id: conv }), 201);
    const step = await ok(
      http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
        toolCalls: [
          { toolName: 'get_x', arguments: { i } },
          { toolName: 'send_x', arguments: { i } },
        ],
      }),
      201,
    );
    const held = step.body.toolCalls[1];
    const decision = i % 3 === 0 ? 'reject' : 'approve';
    await ok(http.post(`/v1/tool-calls/${held.id}/decision`, approver, { decision }), 200);
    if (decision === 'approve') {
      await ok(http.post(`/v1/tool-calls/${held.id}/execution`, agent), 200);
      await ok(http.post(`/v1/tool-calls/${held.id}/result`, agent, { outcome: 'succeeded' }), 200);
    }
  }

  /** Events per journey: started, 2 proposed, auto-approved, approval requested, decided, (+ executed, completed). */
  const expectedEvents = () =>
    1 + Array.from({ length: CHAINS }, (_, i) => (i % 3 === 0 ? 6 : 8)).reduce((a, b) => a + b, 0);

  beforeAll(async () => {
    for (const tenant of TENANTS_C) {
      await ok(
        http.put('/v1/tools/get_x', await server.token('root', ['admin'], { tenant }), { isReadOnly: true }),
        201,
      );
    }
    const runs = TENANTS_C.flatMap((tenant) => Array.from({ length: CHAINS }, (_, i) => journey(tenant, i)));
    const settled = await Promise.allSettled(runs);
    const failed = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed.length > 0)
      throw new Error(
        `${failed.length} journeys failed: ${failed
          .slice(0, 3)
          .map((f) => String(f.reason))
          .join('; ')}`,
      );
  });

  it.each(TENANTS_C)(
    '%s: every event recorded once, seq 1..N without gaps, each hash recomputes and links',
    async (tenant) => {
      const list = await events(tenant);
      expect(list).toHaveLength(expectedEvents());
      expect(list.map((e) => e.seq)).toEqual(list.map((_, i) => i + 1));
      expect(list[0].prevHash).toBe(GENESIS);
      for (let i = 0; i < list.length; i++) {
        expect(list[i].tenant).toBe(tenant);
        expect(recomputedApiHash(list[i])).toBe(list[i].hash);
        if (i > 0) expect(list[i].prevHash).toBe(list[i - 1].hash);
      }
      expect(new Set(list.map((e) => e.id)).size).toBe(list.length);
    },
  );

  it.each(TENANTS_C)('%s: the rows in the table recompute too, and verify answers ok', async (tenant) => {
    const rows = await eventsOf(server.dataSource, tenant);
    expect(rows).toHaveLength(expectedEvents());
    for (const r of rows) expect(recomputedHash(r)).toBe(r.hash);
    expect(await verify(tenant)).toMatchObject({ ok: true, checked: expectedEvents() });
    const cp = await http.get('/v1/audit/checkpoint', await auditor(tenant), { accept: 'application/json' });
    expect(cp.body).toMatchObject({ tenant, seq: expectedEvents(), hash: rows[rows.length - 1].hash });
  });
});
