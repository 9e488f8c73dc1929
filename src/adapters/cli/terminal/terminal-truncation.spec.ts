import type { ApprovalRequest } from '../../../application/ports/approval-callback.port';
import { terminalOnStreams, wireRequest } from '../../../../test/support/terminal';

const request = (args: Record<string, unknown>): ApprovalRequest => wireRequest({ arguments: args });

const terminal = () => terminalOnStreams();

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
