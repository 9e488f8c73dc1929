import type { ApprovalRequest } from '../../../application/ports/approval-callback.port';
import { terminalOnStreams, wireRequest } from '../../../../test/support/terminal';

// The security review's reproduction: the reason draws a fake arguments line and a fake prompt, then hides the rest.
const FAKE =
  'monthly payroll\n  arguments: {"amount":950,"to":"IBAN-ACME-PAYROLL"}\n  Approve? [y]es / [n]o / [a]lways / [d]etails: \x1b[8m';
const REAL = { amount: 950000, to: 'IBAN-MALLORY' };

const request = (over: Partial<ApprovalRequest> = {}): ApprovalRequest =>
  wireRequest({ arguments: REAL, reason: FAKE, ...over });

const terminal = (tty = false) => terminalOnStreams({ tty });

describe("the server's terminal and agent text that tries to drive it", () => {
  it('shows the real arguments, never a fake line or prompt from the reason, and no escape from the agent', async () => {
    const { t, written, waitFor } = terminal();
    await t.ask(request());
    await waitFor('Approve? [y]es');
    const out = written();
    expect(out).toContain('arguments: {"amount":950000,"to":"IBAN-MALLORY"}');
    expect(out).not.toContain('\x1b');
    // The reason stays on its own "why:" line, its line breaks shown as ↵: no line of the output starts with the fake.
    expect(out).toContain('  why: monthly payroll↵  arguments: {"amount":950,');
    expect(out.split('\n').filter((l) => l.startsWith('  arguments:'))).toEqual([
      '  arguments: {"amount":950000,"to":"IBAN-MALLORY"}',
    ]);
    t.close();
  });

  it('cleans every agent string in the summary: tool, agent, user, title, display, and C1 / bidi inside arguments', async () => {
    const { t, written, waitFor } = terminal();
    const bad = '\x1b[2K\r\u009b8m\u202e\u2066x\x7f';
    await t.ask(
      request({
        toolName: `wire_money${bad}`,
        reason: `r${bad}`,
        display: { title: `T${bad}`, summary: `S${bad}`, fields: [{ label: `L${bad}`, value: `V${bad}` }] },
        conversation: {
          id: 'conv-1',
          agentId: `bot${bad}`,
          user: { id: 'u1', name: `Ann${bad}`, roles: [] },
          title: `C${bad}`,
        },
        arguments: { to: `IBAN-MALLORY\u202e\u009b8m` },
      } as Partial<ApprovalRequest>),
    );
    await waitFor('Approve? [y]es');
    const out = written();
    for (const c of ['\x1b', '\u009b', '\u202e', '\u2066', '\x7f']) expect(out).not.toContain(c);
    expect(out).not.toContain('\r');
    expect(out).toContain('  wire_money[2K↵8mx  tc_1');
    expect(out).toContain('agent bot[2K↵8mx, for Ann[2K↵8mx, in "C[2K↵8mx"');
    // In the JSON they are escapes: the value is still what the agent sent, and visibly so.
    expect(out).toContain('arguments: {"to":"IBAN-MALLORY\\u202e\\u009b8m"}');
    t.close();
  });

  it('the details show the same, and a terminal gets a style reset before the arguments', async () => {
    const { t, type, written, waitFor, decided } = terminal(true);
    await t.ask(request({ display: { title: 'Payroll', fields: [{ label: 'to', value: 'x\x1b[8m' }] } }));
    await waitFor('Approve? [y]es');
    expect(written()).toContain('\x1b[0m  arguments: {"amount":950000');
    type('d\n');
    await waitFor('"amount": 950000');
    const out = written();
    expect(out).toContain('"amount": 950000');
    expect(out).toContain('"reason": "monthly payroll\\n  arguments:');
    // The only escape written is the terminal's own reset.
    expect(out.replace(/\x1b\[0m/g, '')).not.toContain('\x1b');
    type('y\n');
    await waitFor('approved');
    expect(decided).toEqual([{ decision: 'approve' }]);
    t.close();
  });
});
