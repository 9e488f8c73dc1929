import { PassThrough } from 'node:stream';
import type { ApprovalRequest } from '../../../application/ports/approval-callback.port';
import { TerminalApprovalCallback, type TerminalDecision } from './terminal-approval-callback';

const request = (args: Record<string, unknown>): ApprovalRequest => ({
  tenantId: 'default',
  id: 'tc_1',
  conversationId: 'conv-1',
  toolName: 'wire_money',
  arguments: args,
  status: 'pending',
  policy: { level: 'confirm', rule: 0, policyVersion: 1, reason: 'rule 0' },
  approval: { approvers: ['admin'], expiresAt: '2026-01-01T00:05:00.000Z' },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  conversation: { id: 'conv-1', agentId: 'bot', user: null, title: null },
});

/** The terminal on in-memory streams: `type` answers its questions, `decided` is what reached the application. */
function terminal() {
  const input = new PassThrough();
  const output = new PassThrough();
  let written = '';
  output.on('data', (c: Buffer) => (written += c.toString('utf8')));
  const decided: TerminalDecision[] = [];
  const t = new TerminalApprovalCallback(
    {
      isPending: async () => true,
      decide: async (id, input) => {
        decided.push(input);
        return { id, toolName: 'wire_money', status: input.decision === 'reject' ? 'rejected' : 'approved' } as never;
      },
    },
    { input, output },
  );
  /** Waits until the output holds `text` (from `from` on), without timing anything. */
  const waitFor = (text: string, from = 0) =>
    new Promise<void>((resolve) => {
      const check = () => (written.indexOf(text, from) >= 0 ? (output.off('data', check), resolve()) : undefined);
      output.on('data', check);
      check();
    });
  return { t, type: (s: string) => input.write(s), written: () => written, waitFor, decided };
}

describe('the terminal and arguments too long to show', () => {
  // The review's reproduction: padding pushes `amount` past what the summary shows.
  const args = { note: 'n'.repeat(300), amount: 950000 };

  it('never takes y or a on a summary that cut the arguments: it says how long they are and wants d first', async () => {
    const { t, type, written, waitFor, decided } = terminal();
    await t.ask(request(args));
    await waitFor('[n] reject / [d]etails');
    expect(written()).toContain(`arguments too long to show here: ${JSON.stringify(args).length} characters`);
    expect(written()).not.toContain('950000');
    expect(written()).not.toContain('Approve?');
    type('y\n');
    await waitFor('Press d to see them all before approving');
    type('a\n');
    await waitFor('Press d to see them all before approving', written().indexOf('Press d') + 1);
    expect(decided).toEqual([]);
    // Seen whole, it may be approved.
    type('d\n');
    await waitFor('"amount": 950000');
    await waitFor('Approve? [y]es / [n]o / [a]lways / [d]etails:');
    type('y\n');
    await waitFor('wire_money tc_1 approved');
    expect(decided).toEqual([{ decision: 'approve' }]);
    t.close();
  });

  it('still takes a rejection without the details', async () => {
    const { t, type, waitFor, decided } = terminal();
    await t.ask(request(args));
    await waitFor('[n] reject');
    type('n\n');
    await waitFor('Reason (optional):');
    type('\n');
    await waitFor('wire_money tc_1 rejected');
    expect(decided).toEqual([{ decision: 'reject' }]);
    t.close();
  });

  it('asks Approve at once when the arguments fit the summary', async () => {
    const { t, written, waitFor } = terminal();
    await t.ask(request({ amount: 950000 }));
    await waitFor('Approve? [y]es');
    expect(written()).toContain('arguments: {"amount":950000}');
    t.close();
  });
});
