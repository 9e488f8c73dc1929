/** People a policy names (`person:<id or email>`), as the inbox reads a call's approvers. */
import { approverName, namesMe, notifiedFromEvent, readsConversation } from '../../web/src/inbox';
import type { Approval, AuditEvent } from '../../web/src/types';

function notified(approvers: string[]): AuditEvent {
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
    toolCallId: 'tc-1',
    toolName: 'send_email',
    actor: { kind: 'system', id: 'policy', via: 'policy' },
    data: { level: 'notify', rule: 0, policyVersion: 1, approvers, requester: 'lee', channels: ['inbox'] },
    prevHash: '0'.repeat(64),
    hash: '1'.repeat(64),
  };
}

const ann = { sub: 'u-ann', email: 'Ann@Example.com', roles: ['viewer'] };

describe('a person named among the approvers', () => {
  it('is matched by id or email, whatever the capitals, and never through a role of that spelling', () => {
    expect(namesMe('person:ann@example.com', ann)).toBe(true);
    expect(namesMe('person:u-ann', { ...ann, sub: 'U-Ann' })).toBe(true);
    expect(namesMe('person:ann@example.com', { ...ann, email: undefined })).toBe(false);
    expect(namesMe('person:bob', ann)).toBe(false);
    expect(namesMe('viewer', ann)).toBe(false);
  });

  it('is told of a notify call that names them, and not of one naming someone else or a role spelt as a name', () => {
    expect(notifiedFromEvent(notified(['admin', 'person:ann@example.com']), ann, 5)).toMatchObject({
      id: 'tc-1',
      outcome: 'notified',
    });
    expect(notifiedFromEvent(notified(['person:bob']), ann, 5)).toBeNull();
    const impostor = { sub: 'mallory', roles: ['person:ann@example.com'] };
    expect(notifiedFromEvent(notified(['person:ann@example.com']), impostor, 5)).toBeNull();
  });

  it('reads as the name alone on the card', () => {
    expect(['admin', 'requester', 'person:ann@example.com'].map(approverName)).toEqual([
      'admin',
      'the end user',
      'ann@example.com',
    ]);
  });

  it('reads the conversation only with a role that reads it, or as its user: not for being named on one call', () => {
    const call = { conversation: { id: 'c', agentId: 'bot', user: { id: 'lee' }, title: null } } as Pick<
      Approval,
      'conversation'
    >;
    expect(readsConversation(ann, call)).toBe(false);
    expect(readsConversation({ sub: 'bob', roles: ['approver'] }, call)).toBe(true);
    expect(readsConversation({ sub: 'lee', roles: [] }, call)).toBe(true);
  });
});
