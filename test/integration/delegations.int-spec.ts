/**
 * The delegations store against the real database (PostgreSQL, or the embedded one): one delegation per person,
 * replaced by the next; both people persons of the tenant; what holds is asked at an instant; and the inbox of a
 * delegate, who lists what their delegators may decide too, still reads tool_calls_by_status.
 */
import { Client } from 'pg';
import { READ_MODEL } from '../../src/application/ports';
import { DELEGATIONS, DelegationRepository } from '../../src/application/ports/delegation.port';
import type { Delegation } from '../../src/domain/person/delegation';
import { TypeOrmReadModel } from '../../src/infrastructure/persistence/typeorm-read-model';
import { TypeOrmUnitOfWork } from '../../src/infrastructure/persistence/unit-of-work';
import { startTestServer, TestServer } from '../support/server';

jest.setTimeout(120_000);

let server: TestServer;
let store: DelegationRepository;
let uow: TypeOrmUnitOfWork;
let reads: TypeOrmReadModel;

const sql = <T = any>(text: string, params: unknown[] = []): Promise<T[]> => server.dataSource.query(text, params);
const NOW = new Date();
const at = (s: number) => new Date(NOW.getTime() + s * 1000);
const HOUR = 3600;

const delegation = (tenantId: string, personId: string, toPersonId: string, over: Partial<Delegation> = {}) => ({
  tenantId,
  personId,
  toPersonId,
  startsAt: at(-HOUR),
  endsAt: at(HOUR),
  createdAt: at(-HOUR),
  ...over,
});

/** Writes in one unit of work, as the commands do. */
const write = (f: () => Promise<void>) => uow.run(f);

beforeAll(async () => {
  server = await startTestServer({ sweepIntervalMs: 0 });
  store = server.app.get(DELEGATIONS, { strict: false });
  uow = server.app.get(TypeOrmUnitOfWork, { strict: false });
  reads = server.app.get(READ_MODEL, { strict: false });
  await sql(`
    INSERT INTO persons (tenant_id, id, name, email, roles, first_seen_at, last_seen_at)
    SELECT t, p, initcap(p), p || '@example.com', r, now(), now()
      FROM unnest(ARRAY['acme', 'globex']) t,
           (VALUES ('ann', '{admin}'::text[]), ('bob', '{viewer}'), ('carl', '{}'), ('zoe', '{approver}')) AS v(p, r)`);
}, 300_000);

afterAll(async () => {
  await server?.stop();
});

describe('the delegations store', () => {
  it('keeps one delegation per person: a new one replaces it, and removing it leaves none', async () => {
    await write(() => store.put(delegation('acme', 'ann', 'bob', { reason: 'Holiday' })));
    await write(() => store.put(delegation('acme', 'ann', 'carl', { endsAt: at(2 * HOUR) })));
    const d = await store.of('acme', 'ann');
    expect(d).toMatchObject({ personId: 'ann', toPersonId: 'carl', endsAt: at(2 * HOUR) });
    expect(d).not.toHaveProperty('reason');
    expect(await sql(`SELECT count(*)::int AS n FROM delegations WHERE person_id = 'ann'`)).toEqual([{ n: 1 }]);
    await write(() => store.remove('acme', 'ann'));
    expect(await store.of('acme', 'ann')).toBeNull();
  });

  it('refuses a delegation naming someone who is no person of the tenant, or themself', async () => {
    await expect(write(() => store.put(delegation('acme', 'ann', 'nobody')))).rejects.toThrow();
    // bob is a person of globex too, but a row of acme refers to acme's persons only.
    await expect(write(() => store.put(delegation('acme', 'ghost', 'bob')))).rejects.toThrow();
    await expect(write(() => store.put(delegation('acme', 'ann', 'ann')))).rejects.toThrow();
    expect(await store.of('acme', 'ann')).toBeNull();
  });

  it('finds what holds at an instant, with the records of both sides, tenant by tenant', async () => {
    await write(async () => {
      await store.put(delegation('acme', 'ann', 'bob'));
      await store.put(delegation('acme', 'zoe', 'bob', { startsAt: at(HOUR), endsAt: at(2 * HOUR) }));
      await store.put(delegation('globex', 'carl', 'bob'));
    });
    const to = await store.toPerson('acme', 'bob', NOW, 20);
    expect(to.map((r) => [r.delegation.personId, r.delegator.roles])).toEqual([['ann', ['admin']]]);
    expect(to[0].delegator).toMatchObject({ tenantId: 'acme', name: 'Ann', email: 'ann@example.com' });
    expect((await store.toPerson('acme', 'bob', at(HOUR + 1), 20)).map((r) => r.delegation.personId)).toEqual(['zoe']);
    // The end is not included: at `until` it no longer holds.
    expect(await store.toPerson('acme', 'bob', at(HOUR), 20)).toHaveLength(1);
    expect((await store.toPerson('acme', 'bob', at(HOUR), 20))[0].delegation.personId).toBe('zoe');
    expect((await store.toPerson('globex', 'bob', NOW, 20)).map((r) => r.delegation.personId)).toEqual(['carl']);
    expect((await store.fromPersons('acme', ['ann', 'zoe'], NOW, 20)).map((r) => r.delegate.id)).toEqual(['bob']);
    expect(await store.countTo('acme', 'bob', NOW, 'nobody')).toBe(2);
    expect(await store.countTo('acme', 'bob', NOW, 'zoe')).toBe(1);
    await write(async () => {
      for (const [t, p] of [
        ['acme', 'ann'],
        ['acme', 'zoe'],
        ['globex', 'carl'],
      ])
        await store.remove(t, p);
    });
  });

  it('lists the delegations not over, by delegator, a page at a time with an opaque cursor', async () => {
    await write(async () => {
      await store.put(delegation('acme', 'ann', 'bob'));
      await store.put(delegation('acme', 'carl', 'bob', { endsAt: at(-1) }));
      await store.put(delegation('acme', 'zoe', 'bob', { startsAt: at(HOUR), endsAt: at(2 * HOUR) }));
    });
    const first = await store.list('acme', NOW, { limit: 1 });
    expect(first.items.map((i) => [i.delegation.personId, i.delegatorName, i.delegateName])).toEqual([
      ['ann', 'Ann', 'Bob'],
    ]);
    const second = await store.list('acme', NOW, { limit: 1, cursor: first.nextCursor! });
    expect(second.items.map((i) => i.delegation.personId)).toEqual(['zoe']);
    expect(second.nextCursor).toBeNull();
    expect((await store.list('globex', NOW, { limit: 10 })).items).toEqual([]);
    await expect(store.list('acme', NOW, { limit: 1, cursor: 'not-ours' })).rejects.toMatchObject({
      code: 'validation_failed',
    });
  });
});

describe("a delegate's inbox", () => {
  beforeAll(async () => {
    await sql(`
      INSERT INTO conversations (tenant_id, id, agent_id, user_id, user_roles, user_name, title, metadata, pending_count,
                                 created_at, updated_at, version)
      SELECT 'acme', 'c' || i, 'agent-1', 'user-' || (i % 20), '{}', 'U', 'title', '{}', 0, now(), now(), 1
        FROM generate_series(1, 400) i`);
    await sql(`
      INSERT INTO tool_calls (tenant_id, id, conversation_id, tool_name, arguments, status, policy, approvers,
                              expires_at, created_at, updated_at)
      SELECT 'acme', 'tc' || i, 'c' || (i % 400 + 1), 'tool', '{}',
             CASE i % 100 WHEN 0 THEN 'pending' ELSE 'completed' END, '{}',
             CASE i % 3 WHEN 0 THEN '{admin}'::text[] WHEN 1 THEN '{approver}' ELSE '{person:ann@example.com}' END,
             now() + interval '1 hour', now() - i * interval '1 second', now()
        FROM generate_series(1, 20000) i`);
    await sql(`ANALYZE`);
  });

  const bob = { id: 'bob', tenant: 'acme', roles: ['viewer'] };
  const ann = { id: 'ann', tenant: 'acme', roles: ['admin'], email: 'ann@example.com' };

  it('lists what the delegators may decide: their roles, their names, and nothing without them', async () => {
    const own = await reads.listApprovals(bob, { status: 'pending', limit: 1000 });
    expect(own.items).toEqual([]);
    const lent = await reads.listApprovals(bob, { status: 'pending', limit: 1000 }, [ann]);
    const approvers = new Set(lent.items.map((c) => c.approval!.approvers.join()));
    expect([...approvers].sort()).toEqual(['admin', 'person:ann@example.com']);
    const [{ n }] = await sql(
      `SELECT count(*)::int AS n FROM tool_calls WHERE tenant_id = 'acme' AND status = 'pending' AND approvers && $1`,
      [['admin', 'person:ann@example.com']],
    );
    expect(lent.items).toHaveLength(n);
  });

  it('reads tool_calls_by_status, as the inbox of anyone does', async () => {
    const plans = await capture(() => reads.listApprovals(bob, { status: 'pending', limit: 50 }, [ann]));
    expect(plans.length).toBeGreaterThan(0);
    expect(plans[0]).toContain('tool_calls_by_status');
    expect(plans[0]).not.toMatch(/Seq Scan on tool_calls/);
  });
});

/** The plans (EXPLAIN text) of the statements on tool_calls sent while `run` runs. */
async function capture(run: () => Promise<unknown>): Promise<string[]> {
  const sent: Array<{ text: string; values: unknown[] }> = [];
  const query = Client.prototype.query;
  Client.prototype.query = function (this: Client, config: any, values?: any, callback?: any) {
    const text = typeof config === 'string' ? config : config?.text;
    if (typeof text === 'string' && /^\s*SELECT t\.id FROM tool_calls/.test(text))
      sent.push({ text, values: (typeof config === 'object' && config.values) || values });
    return (query as any).call(this, config, values, callback);
  } as typeof query;
  try {
    await run();
  } finally {
    Client.prototype.query = query;
  }
  const plans: string[] = [];
  for (const s of sent) {
    const rows = await sql(`EXPLAIN ${s.text}`, s.values);
    plans.push(rows.map((r) => r['QUERY PLAN']).join('\n'));
  }
  return plans;
}
