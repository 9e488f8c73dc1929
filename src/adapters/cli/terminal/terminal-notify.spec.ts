import { PassThrough } from 'node:stream';
import type { ApprovalRequest } from '../../../application/ports/approval-callback.port';
import { TerminalApprovalCallback } from './terminal-approval-callback';

const request = (tenantId: string, rule: number | null): ApprovalRequest => ({
  tenantId,
  id: 'tc_1',
  conversationId: 'conv-1',
  toolName: 'send_email',
  arguments: {},
  status: 'approved',
  policy: { level: 'notify', rule, policyVersion: 1, reason: 'notify' },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  conversation: { id: 'conv-1', agentId: 'bot', user: null, title: null },
});

function terminal(tenant?: string) {
  const output = new PassThrough();
  let written = '';
  output.on('data', (c: Buffer) => (written += c.toString('utf8')));
  const decisions = {
    isPending: async () => false,
    decide: async () => {
      throw new Error('nothing to decide');
    },
  };
  const t = new TerminalApprovalCallback(decisions, { input: new PassThrough(), output }, tenant);
  return { t, written: () => written };
}

describe('the terminal and notify calls', () => {
  it('prints one line, asking nothing', async () => {
    const { t, written } = terminal('default');
    await t.notify(request('default', 3));
    await t.notify(request('default', null));
    expect(written()).toBe(
      '  (ran at once, FYI: send_email tc_1 by policy rule 3)\n  (ran at once, FYI: send_email tc_1 by policy defaults)\n',
    );
    t.close();
  });

  it("stays quiet about another tenant's calls", async () => {
    const { t, written } = terminal('default');
    await t.notify(request('other', 3));
    expect(written()).toBe('');
    t.close();
  });
});
