import { eventsOf } from '../support/audit';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

/**
 * Retention (EU AI Act Art. 19): nothing younger than six months is ever purged, a purge is itself an
 * event, and the trail that remains still verifies.
 */
describe('purging the audit trail', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let admin: string;
  let auditor: string;
  const TENANT = 'retention';

  beforeAll(async () => {
    server = await startTestServer();
    api = client(server.url);
    admin = await server.token('ann', ['admin'], { tenant: TENANT });
    auditor = await server.token('audrey', ['auditor'], { tenant: TENANT });
    const agent = await server.token('bot', ['agent'], { tenant: TENANT });
    for (let i = 0; i < 4; i++) expect((await api.post('/v1/conversations', agent, { id: `c${i}` })).status).toBe(201);
    // Age the first three events by a year, as if written long ago. Only the database owner can, by
    // lifting the protection; the rows keep their hashes, so the chain after them stays linked.
    await server.dataSource.query(`ALTER TABLE events DISABLE TRIGGER events_no_update_delete`);
    await server.dataSource.query(`UPDATE events SET at = at - interval '1 year' WHERE tenant_id = $1 AND seq <= 3`, [
      TENANT,
    ]);
    await server.dataSource.query(`ALTER TABLE events ENABLE ALWAYS TRIGGER events_no_update_delete`);
  });

  afterAll(() => server.stop());

  const monthsAgo = (n: number) => new Date(Date.now() - n * 31 * 24 * 3600 * 1000).toISOString();

  it('refuses a cut-off younger than six months and touches nothing', async () => {
    const r = await api.post('/v1/audit/purge', admin, { before: monthsAgo(5), reason: 'too soon' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
    expect(JSON.stringify(r.body)).toMatch(/six months|6 months/);
    expect((await eventsOf(server.dataSource, TENANT)).length).toBe(4);
  });

  it('is for admins only: auditors change nothing', async () => {
    expect((await api.post('/v1/audit/purge', auditor, { before: monthsAgo(7), reason: 'x' })).status).toBe(403);
  });

  it('refuses a plain DELETE of old events that does not go through the purge', async () => {
    await expect(
      server.dataSource.query(`DELETE FROM events WHERE tenant_id = $1 AND seq = 1`, [TENANT]),
    ).rejects.toThrow(/append-only/);
  });

  it('refuses, in the database itself, to purge a young event even when the purge flag is set', async () => {
    const qr = server.dataSource.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await qr.query(`SELECT set_config('tollgate.retention_purge', 'on', true)`);
      await expect(qr.query(`DELETE FROM events WHERE tenant_id = $1 AND seq = 4`, [TENANT])).rejects.toThrow(
        /younger than six months/,
      );
      await qr.rollbackTransaction();
    } finally {
      await qr.release();
    }
  });

  it('purges the old prefix, records an AuditPurged event, and the rest still verifies', async () => {
    const r = await api.post('/v1/audit/purge', admin, {
      before: monthsAgo(7),
      reason: 'retention policy: keep 6 months',
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ purgedCount: 3, firstPurgedSeq: 1, lastPurgedSeq: 3 });

    const events = (await api.get('/v1/audit/events', auditor)).body.events;
    expect(events.map((e: { seq: number }) => e.seq)).toEqual([4, 5]);
    expect(events[1]).toMatchObject({
      type: 'AuditPurged',
      actor: { id: 'ann' },
      data: { purgedCount: 3, lastPurgedSeq: 3, reason: 'retention policy: keep 6 months' },
    });
    expect(events[1].data.lastPurgedHash).toBe(events[0].prevHash);

    expect((await api.get('/v1/audit/verify', auditor)).body).toEqual({ ok: true, checked: 2 });
  });

  it('a purge with nothing old enough records nothing', async () => {
    const r = await api.post('/v1/audit/purge', admin, { before: monthsAgo(7), reason: 'again' });
    expect(r.body).toMatchObject({ purgedCount: 0 });
    expect((await api.get('/v1/audit/events', auditor)).body.events).toHaveLength(2);
  });

  it('a gap at the start that no purge accounts for fails verification', async () => {
    // Remove the purge's anchor behind the service's back: the missing events are now unexplained.
    await server.dataSource.query(`ALTER TABLE events DISABLE TRIGGER events_no_update_delete`);
    await server.dataSource.query(
      `UPDATE events SET data = jsonb_set(data, '{lastPurgedHash}', '"forged"') WHERE tenant_id = $1 AND type = 'AuditPurged'`,
      [TENANT],
    );
    await server.dataSource.query(`ALTER TABLE events ENABLE ALWAYS TRIGGER events_no_update_delete`);
    expect((await api.get('/v1/audit/verify', auditor)).body).toMatchObject({ ok: false, firstBadSeq: 1 });
  });
});
