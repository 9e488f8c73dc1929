import type { ApprovalRequest } from '../../../application/ports/approval-callback.port';
import { terminalOnStreams, wireRequest } from '../../../../test/support/terminal';

const request = (id: string): ApprovalRequest =>
  wireRequest({ id, approval: { approvers: ['admin'], expiresAt: '2026-01-01T00:05:00.000Z', stepUp: 'passkey' } });

/** The terminal, its card links at localhost; `decided` names each call's id. */
function terminal() {
  const kit = terminalOnStreams({ cardUrl: (id) => `http://localhost:8080/#/calls/${id}` });
  return { ...kit, decided: kit.decidedWithIds };
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
