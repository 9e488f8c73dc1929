import { PassThrough } from 'node:stream';
import type { ApprovalRequest } from '../../src/application/ports/approval-callback.port';
import {
  TerminalApprovalCallback,
  type TerminalDecision,
} from '../../src/adapters/cli/terminal/terminal-approval-callback';

/** A held `wire_money` call as the server's terminal is asked about it; `over` changes any part. */
export function wireRequest(over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    tenantId: 'default',
    id: 'tc_1',
    conversationId: 'conv-1',
    toolName: 'wire_money',
    arguments: { to: 'ACME', amount: 950000 },
    status: 'pending',
    policy: { level: 'confirm', rule: 0, policyVersion: 1, reason: 'rule 0' },
    approval: { approvers: ['admin'], expiresAt: '2026-01-01T00:05:00.000Z' },
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    conversation: { id: 'conv-1', agentId: 'bot', user: null, title: null },
    ...over,
  };
}

/**
 * The server's terminal on in-memory streams (a TTY when `tty`): `type` answers its questions, `waitFor` waits
 * until the output holds a text (from `from` on) without timing anything, `decided` is what reached the
 * application (`decidedWithIds` with the call's id).
 */
export function terminalOnStreams(opts: { tty?: boolean; cardUrl?: (id: string) => string } = {}) {
  const input = new PassThrough();
  const output = Object.assign(new PassThrough(), opts.tty ? { isTTY: true } : {});
  let written = '';
  output.on('data', (c: Buffer) => (written += c.toString('utf8')));
  const decided: TerminalDecision[] = [];
  const decidedWithIds: Array<[string, TerminalDecision]> = [];
  const t = new TerminalApprovalCallback(
    {
      isPending: async () => true,
      decide: async (id, d) => {
        decided.push(d);
        decidedWithIds.push([id, d]);
        return { id, toolName: 'wire_money', status: d.decision === 'reject' ? 'rejected' : 'approved' } as never;
      },
      ...(opts.cardUrl ? { cardUrl: opts.cardUrl } : {}),
    },
    { input, output },
  );
  const waitFor = (text: string, from = 0) =>
    new Promise<void>((resolve) => {
      const check = () => (written.indexOf(text, from) >= 0 ? (output.off('data', check), resolve()) : undefined);
      output.on('data', check);
      check();
    });
  return { t, type: (s: string) => input.write(s), written: () => written, waitFor, decided, decidedWithIds };
}
