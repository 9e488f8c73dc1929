import type { ApprovalRequest } from '../../../application/ports/approval-callback.port';
import { terminalOnStreams, wireRequest } from '../../../../test/support/terminal';

const withPreview = (preview: Record<string, unknown>): ApprovalRequest =>
  ({
    ...wireRequest({ arguments: { amount: 5 } }),
    preview: { digest: 'd'.repeat(43), ...preview },
  }) as ApprovalRequest;

describe('the terminal and a preview longer than its summary shows', () => {
  const content = Array.from({ length: 30 }, (_, i) => `+line ${i}`).join('\n');

  it('takes no y until d has shown the whole preview', async () => {
    const { t, type, written, waitFor, decided } = terminalOnStreams();
    await t.ask(withPreview({ kind: 'diff', content }));
    await waitFor('[n] reject / [d]etails');
    expect(written()).not.toContain('+line 29');
    type('y\n');
    await waitFor('Press d to see all of it before approving');
    expect(decided).toEqual([]);
    type('d\n');
    await waitFor('+line 29');
    await waitFor('Approve? [y]es');
    type('y\n');
    await waitFor('approved');
    expect(decided).toEqual([{ decision: 'approve' }]);
    t.close();
  });

  it('never approves an image preview (the web inbox shows it), but rejects', async () => {
    const { t, type, waitFor, decided } = terminalOnStreams();
    await t.ask(withPreview({ kind: 'image', content: 'data:image/png;base64,iVBORw0KGgo=' }));
    await waitFor('[n] reject / [d]etails');
    type('y\n');
    await waitFor('a terminal cannot show');
    expect(decided).toEqual([]);
    type('n\n');
    await waitFor('Reason (optional):');
    type('\n');
    await waitFor('rejected');
    expect(decided).toEqual([{ decision: 'reject' }]);
    t.close();
  });

  it('asks Approve at once when a short preview is shown whole', async () => {
    const { t, waitFor, written } = terminalOnStreams();
    await t.ask(withPreview({ kind: 'diff', content: '-a\n+b' }));
    await waitFor('Approve? [y]es');
    expect(written()).toContain('+b');
    t.close();
  });
});
