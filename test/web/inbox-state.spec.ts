/** The inbox's state without a browser: snapshots and live events in any order, notes of who decided where. */
import {
  depart,
  departureFromDecision,
  departureFromEvent,
  emptyInbox,
  LINGER_MS,
  pendingItems,
  prune,
  withSnapshot,
} from '../../web/src/inbox';
import type { Approval, AuditEvent } from '../../web/src/types';

function approval(id: string, createdAt = '2025-01-01T10:00:00.000Z', extra: Partial<Approval> = {}): Approval {
  return {
    id,
    conversationId: 'conv-1',
    toolName: 'delete_source',
    arguments: { id: 'src_2' },
    status: 'pending',
    policy: { level: 'confirm', rule: 1, policyVersion: 3, reason: 'Rule 1 (delete_source): confirm' },
    approval: { approvers: ['approver'], expiresAt: '2025-01-01T10:05:00.000Z' },
    createdAt,
    updatedAt: createdAt,
    conversation: {
      id: 'conv-1',
      agentId: 'bot',
      user: { id: 'lee', roles: [], name: 'Lee', assurance: 'asserted' },
      title: 'Tidy up',
    },
    ...extra,
  };
}

function event(
  type: AuditEvent['type'],
  toolCallId: string,
  actor: Omit<AuditEvent['actor'], 'kind'> & { kind?: AuditEvent['actor']['kind'] },
  data: Record<string, unknown>,
): AuditEvent {
  const at = '2025-01-01T10:01:00.000Z';
  return {
    seq: 1,
    id: 'e1',
    type,
    at,
    recordedAt: at,
    tenant: 'default',
    instanceId: 'i',
    conversationId: 'conv-1',
    toolCallId,
    toolName: 'delete_source',
    actor: { kind: 'person', ...actor },
    data,
    prevHash: '0'.repeat(64),
    hash: '1'.repeat(64),
  };
}

describe('inbox state', () => {
  it('a snapshot lists pending calls oldest first and says which are new', () => {
    const first = withSnapshot(emptyInbox, [approval('b', '2025-01-01T10:00:02.000Z'), approval('a')], 0);
    expect(first.state.items.map((i) => i.id)).toEqual(['a', 'b']);
    expect(first.arrived.map((i) => i.id).sort()).toEqual(['a', 'b']);
    const second = withSnapshot(
      first.state,
      [approval('a'), approval('b', '2025-01-01T10:00:02.000Z'), approval('c', '2025-01-01T10:00:03.000Z')],
      0,
    );
    expect(second.arrived.map((i) => i.id)).toEqual(['c']);
  });

  it('a call that left is never brought back by an older snapshot', () => {
    let s = withSnapshot(emptyInbox, [approval('a'), approval('b')], 0).state;
    s = depart(s, { id: 'a', title: 'x', outcome: 'approved', note: 'approved by ann via Slack', at: 1000 }).state;
    s = withSnapshot(s, [approval('a'), approval('b')], 0).state; // read before the decision committed
    expect(pendingItems(s).map((i) => i.id)).toEqual(['b']);
    expect(s.items.map((i) => i.id)).toEqual(['a', 'b']); // still shown, with its note, for a moment
    expect(prune(s, 1000 + LINGER_MS - 1).items).toHaveLength(2);
    expect(prune(s, 1000 + LINGER_MS).items.map((i) => i.id)).toEqual(['b']);
  });

  it('a call a snapshot no longer lists lingers as gone, and takes the outcome its event brings later', () => {
    // After a reconnect the snapshot can overtake the replayed event that says who decided.
    let s = withSnapshot(emptyInbox, [approval('a'), approval('b')], 0).state;
    s = withSnapshot(s, [approval('b')], 1000).state;
    expect(pendingItems(s).map((i) => i.id)).toEqual(['b']);
    expect(s.items.map((i) => i.id)).toEqual(['a', 'b']);
    expect(s.gone.get('a')).toMatchObject({ outcome: 'gone', note: 'no longer waiting for you', at: 1000 });
    expect(s.recent).toEqual([]); // not announced: the reason is not known yet

    const late = depart(s, { id: 'a', title: 'x', outcome: 'approved', note: 'approved by Bob via the API', at: 1500 });
    expect(late.listed).toBe(true);
    expect(late.state.gone.get('a')?.note).toBe('approved by Bob via the API');
    expect(late.state.recent.map((d) => d.note)).toEqual(['approved by Bob via the API']);
    expect(prune(late.state, 1500 + LINGER_MS - 1).items).toHaveLength(2); // lingers from the event on
    // Once named, the outcome stays: neither a repeat nor a vague departure replaces it.
    expect(depart(late.state, { id: 'a', title: 'x', outcome: 'rejected', note: 'no', at: 1600 }).listed).toBe(false);
    expect(depart(late.state, { id: 'a', title: 'x', outcome: 'gone', note: 'n', at: 1600 }).state).toBe(late.state);
    expect(withSnapshot(late.state, [approval('b')], 2000).state.gone.get('a')?.outcome).toBe('approved');
  });

  it('a call only a snapshot saw leave comes back when a later snapshot lists it pending', () => {
    let s = withSnapshot(emptyInbox, [approval('a'), approval('b')], 0).state;
    s = withSnapshot(s, [approval('b')], 1000).state;
    const back = withSnapshot(s, [approval('a'), approval('b')], 2000);
    expect(pendingItems(back.state).map((i) => i.id)).toEqual(['a', 'b']);
    expect(back.state.gone.has('a')).toBe(false);
    expect(back.arrived).toEqual([]); // still listed, so not new
    expect(
      withSnapshot(prune(s, 1000 + LINGER_MS), [approval('a'), approval('b')], 9000).arrived.map((a) => a.id),
    ).toEqual(['a']);
  });

  it('a departure is listed in "recently decided" only when it was in this person\'s list, and only once', () => {
    let s = withSnapshot(emptyInbox, [approval('a', undefined, { display: { title: 'Delete source' } })], 0).state;
    const mine = depart(s, { id: 'a', title: 'delete_source', outcome: 'rejected', note: 'rejected by you', at: 1 });
    expect(mine.listed).toBe(true);
    expect(mine.state.recent.map((d) => d.title)).toEqual(['Delete source']);
    s = mine.state;
    expect(depart(s, { id: 'a', title: 'x', outcome: 'rejected', note: 'again', at: 2 })).toEqual({
      state: s,
      listed: false,
    });
    const other = depart(s, { id: 'zzz', title: 'x', outcome: 'approved', note: 'n', at: 3 });
    expect(other.listed).toBe(false);
    expect(other.state.recent).toHaveLength(1);
  });

  it('notes say who decided, where, and why', () => {
    const approved = departureFromEvent(
      event(
        'ToolCallApproved',
        'a',
        { id: 'ann', name: 'Ann', via: 'slack', kind: 'person' },
        { outcome: 'approved', via: 'slack', decision: 'approve' },
      ),
      'me',
      5,
    );
    expect(approved).toMatchObject({ id: 'a', outcome: 'approved', note: 'approved by Ann via Slack', at: 5 });
    const mine = departureFromEvent(
      event(
        'ToolCallRejected',
        'a',
        { id: 'me', via: 'web' },
        { outcome: 'rejected', via: 'web', reason: 'too broad' },
      ),
      'me',
      5,
    );
    expect(mine?.note).toBe('rejected by you via the web inbox: too broad');
    const always = departureFromEvent(
      event(
        'ToolCallApproved',
        'a',
        { id: 'bob', via: 'cli' },
        { outcome: 'approved', via: 'cli', decision: 'always_allow' },
      ),
      'me',
      5,
    );
    expect(always?.note).toBe('always allowed by bob via the CLI');
    const edited = departureFromEvent(
      event(
        'ToolCallApproved',
        'a',
        { id: 'bob', via: 'api' },
        { outcome: 'approved', via: 'api', decision: 'approve', editedArguments: { id: 1 } },
      ),
      'me',
      5,
    );
    expect(edited?.note).toBe('approved with edited arguments by bob via the API');
    const expired = departureFromEvent(
      event(
        'ToolCallExpired',
        'a',
        { id: 'system', via: 'system', kind: 'system' },
        { outcome: 'expired', waitedMs: 300_000 },
      ),
      'me',
      5,
    );
    expect(expired?.note).toBe('expired after 5 min 00 s without a decision');
    const cancelled = departureFromEvent(
      event(
        'ToolCallCancelled',
        'a',
        { id: 'root', via: 'api' },
        { outcome: 'cancelled', reason: 'incident drill', previousStatus: 'pending' },
      ),
      'me',
      5,
    );
    expect(cancelled?.note).toBe('cancelled by root: incident drill');
  });

  it('events that do not end a pending call make no departure', () => {
    expect(
      departureFromEvent(event('ToolCallProposed', 'a', { id: 'bot', kind: 'agent', via: 'api' }, {}), 'me', 1),
    ).toBeNull();
    expect(
      departureFromEvent(
        event(
          'ToolCallCancelled',
          'a',
          { id: 'root', via: 'api' },
          { outcome: 'cancelled', previousStatus: 'approved' },
        ),
        'me',
        1,
      ),
    ).toBeNull();
  });

  it("a decision record (the answer to this page's decision, or a 409) makes the same kind of note", () => {
    const d = departureFromDecision(
      approval('a'),
      { outcome: 'approved', by: { id: 'me', via: 'web' }, at: '2025-01-01T10:01:00.000Z' },
      'me',
      9,
      'always_allow',
    );
    expect(d).toEqual({
      id: 'a',
      title: 'delete_source',
      outcome: 'approved',
      note: 'always allowed by you via the web inbox',
      at: 9,
    });
  });
});
