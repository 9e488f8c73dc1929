/**
 * The per-tenant group commit against a real database: optimistic saves of one tenant that arrive while the
 * tenant's previous commit is in flight are written by one statement. A save whose conversation moved on is
 * left out of it (and only it), a statement that fails as a whole falls back to one save at a time, and the
 * hash chain stays gap-free either way. On the embedded database (one session) saves are never grouped; the
 * outcomes must be the same.
 */
import { CONVERSATIONS, UNIT_OF_WORK, UnitOfWork } from '../../src/application/ports';
import { Conversation, ConversationUser } from '../../src/domain/conversation/conversation.aggregate';
import type { PolicyVerdict } from '../../src/domain/policy/approval-policy';
import { SqlConversationRepository } from '../../src/infrastructure/persistence/sql-conversation.repository';
import { eventsOf as eventsOfTenant, expectIntactChain } from '../support/audit';
import { startTestServer, TestServer } from '../support/server';

const USER: ConversationUser = { id: 'u-gina', roles: ['member'] };
const automatic: PolicyVerdict = {
  level: 'automatic',
  rule: 1,
  policyVersion: 1,
  reason: 'reads run at once',
  approvers: [],
  timeoutSeconds: 3600,
  grants: 'tenant',
};

let server: TestServer;
let uow: UnitOfWork;
let repo: SqlConversationRepository;
const grouping = !!process.env.DATABASE_URL;

beforeAll(async () => {
  server = await startTestServer();
  uow = server.app.get(UNIT_OF_WORK);
  repo = server.app.get(CONVERSATIONS);
});

afterAll(async () => {
  await server?.stop();
});

async function started(tenant: string, ids: string[]): Promise<void> {
  for (const id of ids) {
    await uow.run(async () => {
      await repo.save(Conversation.start({ id, tenantId: tenant, agentId: 'agent-g', user: USER, at: new Date() }));
    });
  }
}

/** The conversation as a command loads it, with one auto-approved call proposed (not yet saved). */
async function proposing(tenant: string, id: string, callId: string): Promise<Conversation> {
  const c = (await repo.findById(tenant, id, { calls: { statuses: ['pending'] } }))!;
  c.propose(
    [{ toolName: 'get_source', arguments: { id: callId } }],
    () => automatic,
    () => callId,
    new Date(),
    null,
  );
  return c;
}

/**
 * A propose command: its first attempt saves the conversation loaded beforehand (so that commands started in one
 * tick queue their saves together); a retry loads and proposes again, as the real handler does.
 */
function save(first: Conversation, callId: string): Promise<void> {
  let attempt = 0;
  return uow.run(
    async () => {
      const c = attempt++ === 0 ? first : await proposing(first.tenantId, first.id, callId);
      await repo.save(c);
    },
    { optimistic: true },
  );
}

const callsOf = (tenant: string) =>
  server.dataSource.query(
    `SELECT conversation_id, id, status FROM tool_calls WHERE tenant_id = $1 ORDER BY conversation_id, id`,
    [tenant],
  ) as Promise<Array<{ conversation_id: string; id: string; status: string }>>;

describe('optimistic saves of one tenant arriving together', () => {
  it('are written by one statement; the one whose conversation moved on is left out of it and runs again', async () => {
    const T = 't-group-stale';
    await started(T, ['a', 'b', 'c', 'x']);
    const [a, x1, x2, b, c] = await Promise.all([
      proposing(T, 'a', 'tc_a'),
      proposing(T, 'x', 'tc_x1'),
      proposing(T, 'x', 'tc_x2'), // the same conversation, loaded at the same version
      proposing(T, 'b', 'tc_b'),
      proposing(T, 'c', 'tc_c'),
    ]);
    const before = { ...repo.grouped };

    // `a` goes at once, alone; the others queue behind it and go together.
    const outcomes = await Promise.allSettled([
      save(a, 'tc_a'),
      save(x1, 'tc_x1'),
      save(x2, 'tc_x2'),
      save(b, 'tc_b'),
      save(c, 'tc_c'),
    ]);

    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    // x2 was left out of the grouped statement (x1 moved its conversation on) and written by its retry.
    if (grouping)
      expect({
        statements: repo.grouped.statements - before.statements,
        saves: repo.grouped.saves - before.saves,
      }).toEqual({ statements: 1, saves: 3 });
    expect(await callsOf(T)).toEqual([
      { conversation_id: 'a', id: 'tc_a', status: 'approved' },
      { conversation_id: 'b', id: 'tc_b', status: 'approved' },
      { conversation_id: 'c', id: 'tc_c', status: 'approved' },
      { conversation_id: 'x', id: 'tc_x1', status: 'approved' },
      { conversation_id: 'x', id: 'tc_x2', status: 'approved' },
    ]);
    const events = await eventsOfTenant(server.dataSource, T);
    expectIntactChain(events);
    // Each written save's events are consecutive on the chain, in the order the saves were written.
    const proposed = events.filter((e) => e.type === 'ToolCallProposed').map((e) => e.tool_call_id);
    expect(proposed).toEqual(['tc_a', 'tc_x1', 'tc_b', 'tc_c', 'tc_x2']);
    for (const id of proposed) {
      const seqs = events.filter((e) => e.tool_call_id === id).map((e) => Number(e.seq));
      expect(seqs.length).toBeGreaterThanOrEqual(2);
      expect(seqs).toEqual(seqs.map((_, i) => seqs[0] + i));
    }
    // The versions moved once per written save.
    expect((await repo.findById(T, 'x'))!.version).toBe(x1.version + 1);
  });

  it('fall back to one statement each when theirs fails as a whole, so only the faulty save fails', async () => {
    const T = 't-group-fault';
    await started(T, ['first', 'd', 'e', 'f']);
    await save(await proposing(T, 'first', 'tc_taken'), 'tc_taken');
    const lone = await proposing(T, 'first', 'tc_lone');
    const [d, e, f] = await Promise.all([
      proposing(T, 'd', 'tc_taken'),
      proposing(T, 'e', 'tc_e'),
      proposing(T, 'f', 'tc_f'),
    ]);
    const before = { ...repo.grouped };

    // d reuses a call id of the tenant: its insert breaks the tenant's primary key, and with it a grouped statement.
    const outcomes = await Promise.allSettled([
      save(lone, 'tc_lone'),
      save(d, 'tc_taken'),
      save(e, 'tc_e'),
      save(f, 'tc_f'),
    ]);

    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/duplicate key|unique/i);
    expect(repo.grouped).toEqual(before); // the grouped statement wrote nothing
    expect((await callsOf(T)).map((r) => `${r.conversation_id}/${r.id}`)).toEqual([
      'e/tc_e',
      'f/tc_f',
      'first/tc_lone',
      'first/tc_taken',
    ]);
    expectIntactChain(await eventsOfTenant(server.dataSource, T));
  });

  it('of many conversations at once leave every call and the chain whole', async () => {
    const T = 't-group-many';
    const ids = Array.from({ length: 24 }, (_, i) => `m${String(i).padStart(2, '0')}`);
    await started(T, ids);
    const loaded = await Promise.all(ids.map((id) => proposing(T, id, `tc_${id}`)));
    const outcomes = await Promise.allSettled(loaded.map((c, i) => save(c, `tc_${ids[i]}`)));
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
    expect((await callsOf(T)).map((r) => r.id)).toEqual(ids.map((id) => `tc_${id}`));
    const events = await eventsOfTenant(server.dataSource, T);
    expectIntactChain(events);
    expect(events.filter((e) => e.type === 'ToolCallProposed')).toHaveLength(24);
  });
});
