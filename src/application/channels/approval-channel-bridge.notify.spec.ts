import { Conversation } from '../../domain/conversation/conversation.aggregate';
import type { PolicyVerdict } from '../../domain/policy/approval-policy';
import type { AuditEvent } from '../ports/audit-log.port';
import type { ApprovalCallback, ApprovalRequest } from '../ports/approval-callback.port';
import { ApprovalChannelBridge } from './approval-channel-bridge';

const AT = new Date('2025-03-01T12:00:00.000Z');

/** A conversation with one `notify` call, and the ToolCallNotified event it recorded, as the outbox hands it over. */
function notified(): { conv: Conversation; event: AuditEvent } {
  const conv = Conversation.start({
    id: 'conv_1',
    tenantId: 't1',
    agentId: 'bot',
    user: { id: 'u-rita', roles: [] },
    at: AT,
  });
  const verdict: PolicyVerdict = {
    level: 'notify',
    rule: 1,
    policyVersion: 2,
    reason: 'Rule 1 (send_email): notify',
    approvers: ['requester', 'admin'],
    timeoutSeconds: 300,
    grants: 'tenant',
  };
  conv.propose(
    [{ toolName: 'send_email', arguments: { to: 'x' } }],
    () => verdict,
    () => 'tc_1',
    AT,
    null,
  );
  const e = conv.pullEvents().find((x) => x.type === 'ToolCallNotified')!;
  const event: AuditEvent = {
    seq: 3,
    id: 'ev_3',
    type: e.type,
    at: e.at.toISOString(),
    recordedAt: e.at.toISOString(),
    tenant: 't1',
    instanceId: 'i',
    conversationId: e.conversationId,
    toolCallId: e.toolCallId,
    toolName: e.toolName,
    actor: { ...e.actor },
    data: { ...e.data },
    prevHash: '0',
    hash: '1',
  };
  return { conv, event };
}

class Channel implements ApprovalCallback {
  readonly told: Array<{ request: ApprovalRequest; approvers: string[] }> = [];
  constructor(readonly channel: string) {}
  async ask(): Promise<void> {}
  async tell(): Promise<void> {}
  async notify(request: ApprovalRequest, told: { approvers: string[] }): Promise<void> {
    this.told.push({ request, approvers: told.approvers });
  }
}

function bridge(callback: ApprovalCallback, conv: Conversation, now = AT) {
  return new ApprovalChannelBridge(callback, { findByToolCallId: async () => conv }, { now: () => now });
}

describe('the channel bridge and notify calls', () => {
  it('hands a channel the call, its conversation and who is told', async () => {
    const { conv, event } = notified();
    const slack = new Channel('slack');
    const b = bridge(slack, conv);
    expect(b.wants(event)).toBe(true);
    await b.deliver(event);
    expect(slack.told).toHaveLength(1);
    expect(slack.told[0].approvers).toEqual(['requester', 'admin']);
    expect(slack.told[0].request).toMatchObject({
      id: 'tc_1',
      tenantId: 't1',
      toolName: 'send_email',
      status: 'approved',
      policy: { level: 'notify', rule: 1 },
      conversation: { id: 'conv_1', agentId: 'bot' },
    });
  });

  it('skips a policy channel the event does not name, but tells a channel outside the policy’s list (the terminal)', () => {
    const { conv, event } = notified();
    const withoutSlack = { ...event, data: { ...event.data, channels: ['webhook', 'inbox'] } };
    expect(bridge(new Channel('slack'), conv).wants(withoutSlack)).toBe(false);
    expect(bridge(new Channel('terminal'), conv).wants(withoutSlack)).toBe(true);
  });

  it('sends an FYI an hour late, but not older news (a channel enabled on a running system does not replay its history)', async () => {
    const { conv, event } = notified();
    const slack = new Channel('slack');
    await bridge(slack, conv, new Date(AT.getTime() + 60 * 60 * 1000)).deliver(event);
    expect(slack.told).toHaveLength(1);
    await bridge(slack, conv, new Date(AT.getTime() + 60 * 60 * 1000 + 1)).deliver(event);
    expect(slack.told).toHaveLength(1);
  });

  it('leaves channels that do not tell people alone', () => {
    const { conv, event } = notified();
    const quiet: ApprovalCallback = { channel: 'slack', ask: async () => undefined, tell: async () => undefined };
    expect(bridge(quiet, conv).wants(event)).toBe(false);
  });
});
