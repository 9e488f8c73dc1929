import { PassThrough } from 'node:stream';
import type { ApprovalRequest } from '../../../application/ports/approval-callback.port';
import { TerminalApprovalCallback, type TerminalDecision } from './terminal-approval-callback';

const request = (id: string): ApprovalRequest => ({
  tenantId: 'default',
  id,
  conversationId: 'conv-1',
  toolName: 'wire_money',
  arguments: { to: 'ACME', amount: 950000 },
  status: 'pending',
  policy: { level: 'confirm', rule: 0, policyVersion: 1, reason: 'rule 0' },
  approval: { approvers: ['admin'], expiresAt: '2026-01-01T00:05:00.000Z', stepUp: 'passkey' },
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
  const decided: Array<[string, TerminalDecision]> = [];
  const t = new TerminalApprovalCallback(
    {
      isPending: async () => true,
      decide: async (id, input) => {
        decided.push([id, input]);
        return { id, toolName: 'wire_money', status: input.decision === 'reject' ? 'rejected' : 'approved' } as never;
      },
      cardUrl: (id) => `http://localhost:8080/#/calls/${id}`,
    },
    { input, output },
  );
  const waitFor = (text: string, from = 0) =>
    new Promise<void>((resolve) => {
      const check = () => (written.indexOf(text, from) >= 0 ? (output.off('data', check), resolve()) : undefined);
      output.on('data', check);
      check();
    });
  return { t, type: (s: string) => input.write(s), written: () => written, waitFor, decided };
}

describe('the terminal and calls that need a passkey', () => {
  it('offers no approve answer: it says where to approve, refuses y and a, and takes a rejection', async () => {
    const { t, type, written, waitFor, decided } = terminal();
    await t.ask(request('tc_1'));
    await waitFor('[n] reject / [s]kip, leave it to the inbox / [d]etails:');
    expect(written()).toContain('needs a passkey — approve in the inbox: http://localhost:8080/#/calls/tc_1');
    expect(written()).not.toContain('Approve?');
    type('y\n');
    await waitFor('This call needs a passkey, which this terminal cannot give');
    const mark = written().length;
    type('a\n');
    await waitFor('This call needs a passkey, which this terminal cannot give', mark);
    expect(decided).toEqual([]);
    type('n\n');
    await waitFor('Reason (optional):');
    type('not now\n');
    await waitFor('wire_money tc_1 rejected (not now)');
    expect(decided).toEqual([['tc_1', { decision: 'reject', reason: 'not now' }]]);
    t.close();
  });

  it('s leaves the call to the inbox and goes on to the next question', async () => {
    const { t, type, waitFor, decided } = terminal();
    await t.ask(request('tc_1'));
    await t.ask(request('tc_2'));
    await waitFor('[s]kip');
    type('s\n');
    await waitFor('wire_money tc_1 left to the inbox');
    await waitFor('approve in the inbox: http://localhost:8080/#/calls/tc_2');
    expect(decided).toEqual([]);
    t.close();
  });
});
