import { chatApprovalRefusal } from './chat-approval';

const confirm = { level: 'confirm' as const };
const flags = (destructive: boolean) => ({ isReadOnly: false, requiresApproval: true, destructive });

describe('chat approval', () => {
  it('takes what a chat client relays on a confirm call of a tool not flagged destructive', () => {
    expect(chatApprovalRefusal('approve', { ...confirm, toolFlags: flags(false) }, 'mcp')).toBeUndefined();
  });

  it.each<[string, Parameters<typeof chatApprovalRefusal>[1], string]>([
    ['a destructive tool', { ...confirm, toolFlags: flags(true) }, 'the tool is destructive'],
    ['selfApproval: false', { ...confirm, selfApproval: false }, 'selfApproval: false'],
    ['a quorum', { ...confirm, quorum: { count: 2 } }, 'quorum'],
    ['a manual call', { level: 'manual' }, 'held manual'],
    ['allowChatApproval: false', { ...confirm, chatApproval: false }, 'allowChatApproval: false'],
    ['a passkey step-up', { ...confirm, stepUp: 'passkey' }, 'needs a passkey'],
  ])('refuses an approval or always_allow relayed by a chat client on %s, saying why', (_, policy, why) => {
    expect(chatApprovalRefusal('approve', policy, 'mcp')).toContain(why);
    expect(chatApprovalRefusal('always_allow', policy, 'mcp')).toContain(why);
  });

  it('always takes a rejection, and never asks anything of the other channels', () => {
    const strict = { ...confirm, toolFlags: flags(true), chatApproval: false as const };
    expect(chatApprovalRefusal('reject', strict, 'mcp')).toBeUndefined();
    for (const via of ['web', 'cli', 'slack', 'api', 'grpc'] as const)
      expect(chatApprovalRefusal('approve', strict, via)).toBeUndefined();
  });
});
