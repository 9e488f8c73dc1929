/** A `notify` call in the inbox's recent feed: shown to the people its ToolCallNotified event names, once. */
import { depart, emptyInbox, notifiedFromEvent, told } from '../../web/src/inbox';
import type { AuditEvent } from '../../web/src/types';

function notified(data: Record<string, unknown>, toolCallId = 'tc-1'): AuditEvent {
  const at = '2025-01-01T10:01:00.000Z';
  return {
    seq: 7,
    id: 'e7',
    type: 'ToolCallNotified',
    at,
    recordedAt: at,
    tenant: 'default',
    instanceId: 'i',
    conversationId: 'conv-1',
    toolCallId,
    toolName: 'send_email',
    actor: { kind: 'system', id: 'policy', via: 'policy' },
    data,
    prevHash: '0'.repeat(64),
    hash: '1'.repeat(64),
  };
}

const data = (approvers: string[], requester: string | null = 'lee') => ({
  level: 'notify',
  rule: 2,
  policyVersion: 1,
  approvers,
  requester,
  channels: ['slack', 'webhook', 'inbox'],
});
const ann = { sub: 'ann', roles: ['approver'] };
const lee = { sub: 'lee', roles: [] };

describe('notify calls in the recent feed', () => {
  it('tells a person holding one of the approver roles that the call ran at once', () => {
    expect(notifiedFromEvent(notified(data(['approver', 'admin'])), ann, 1000)).toEqual({
      id: 'tc-1',
      title: 'send_email',
      outcome: 'notified',
      note: 'ran at once, you are told (policy rule 2)',
      at: 1000,
    });
  });

  it('tells the requester only when requester is listed, and only the conversation’s own user', () => {
    expect(notifiedFromEvent(notified(data(['requester'])), lee, 1)).toMatchObject({ outcome: 'notified' });
    expect(notifiedFromEvent(notified(data(['admin'])), lee, 1)).toBeNull();
    expect(notifiedFromEvent(notified(data(['requester'], 'someone-else')), lee, 1)).toBeNull();
    expect(notifiedFromEvent(notified(data(['requester'], null)), { sub: 'requester', roles: [] }, 1)).toBeNull();
  });

  it('tells no one whose roles the event does not name, and ignores other events', () => {
    expect(notifiedFromEvent(notified(data(['admin'])), ann, 1)).toBeNull();
    expect(notifiedFromEvent({ ...notified(data(['approver'])), type: 'ToolCallAutoApproved' }, ann, 1)).toBeNull();
  });

  it('adds an FYI to the recent feed once, newest first, without touching the pending list', () => {
    const fyi = notifiedFromEvent(notified(data(['approver'])), ann, 5)!;
    let s = depart(
      { ...emptyInbox, items: [] },
      { id: 'other', title: 'x', outcome: 'approved', note: 'approved', at: 1 },
    ).state;
    const first = told(s, fyi);
    expect(first.added).toBe(true);
    s = first.state;
    const again = told(s, { ...fyi, at: 9 }); // the stream delivered it again after a reconnect
    expect(again).toEqual({ state: s, added: false });
    expect(s.recent.map((d) => [d.id, d.outcome])).toEqual([['tc-1', 'notified']]);
    expect(s.items).toEqual([]);
  });
});
