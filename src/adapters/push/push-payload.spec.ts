import type { ApprovalRequest } from '../../application/ports/approval-callback.port';
import type { ActionOffer } from '../actions/action-links';
import {
  ARGUMENTS_SHOWN,
  argumentsLine,
  askMessage,
  clip,
  fits,
  MAX_PAYLOAD_BYTES,
  outcomeMessage,
  plain,
} from './push-payload';

const request: ApprovalRequest = {
  tenantId: 'default',
  id: 'tc_9',
  conversationId: 'conv-9',
  toolName: 'wire_money',
  arguments: { to: 'ACME', amount: 950 },
  status: 'pending',
  policy: { level: 'confirm', rule: 0, policyVersion: 1, reason: 'rule 0' },
  approval: { approvers: ['admin'], expiresAt: '2026-01-01T00:05:00.000Z' },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  conversation: { id: 'conv-9', agentId: 'pay-bot', user: { id: 'lee', name: 'Lee', roles: [] }, title: null },
};

/** Tokens as long as real ones (an Ed25519 JWS with these claims is about 450 characters). */
const token = (c: string) => c.repeat(600);
const offer: ActionOffer = {
  card: 'https://tollgate.example.com/#/calls/tc_9',
  approve: { url: 'https://tollgate.example.com/act/a', token: token('a') },
  reject: { url: 'https://tollgate.example.com/act/r', token: token('r') },
};

describe('push messages', () => {
  it('name the tool and the summary, the agent and user, and the arguments whole', () => {
    const m = askMessage({ ...request, display: { title: 'Pay ACME', summary: 'Invoice 42, due today' } }, offer);
    expect(m).toEqual({
      v: 1,
      kind: 'ask',
      toolCallId: 'tc_9',
      toolName: 'wire_money',
      title: 'Pay ACME',
      body: 'Invoice 42, due today\nwire_money · pay-bot for Lee\n{"to":"ACME","amount":950}',
      approve: token('a'),
      reject: token('r'),
    });
  });

  it('ask "Approve <tool>?" without a title, and count a quorum', () => {
    const m = askMessage(
      { ...request, approval: { ...request.approval!, quorum: { needed: 2, approvedBy: [] } } },
      offer,
    );
    expect(m.title).toBe('Approve wire_money?');
    expect(m.body.split('\n')).toContain('0 of 2 approvals');
  });

  it('say why Approve is missing, and carry no approve token then', () => {
    const { approve: _a, ...rest } = offer;
    const passkey = askMessage(request, { ...rest, approveWithheld: 'passkey' });
    expect(passkey.approve).toBeUndefined();
    expect(passkey).toMatchObject({ approveWithheld: 'passkey', reject: token('r') });
    expect(passkey.body).toMatch(/Needs a passkey: open it to approve\.$/);
  });

  it('show arguments whole up to the limit, and otherwise only how long they are', () => {
    const fitting = { s: 'x'.repeat(ARGUMENTS_SHOWN - 8) };
    expect(JSON.stringify(fitting)).toHaveLength(ARGUMENTS_SHOWN);
    expect(argumentsLine(fitting)).toEqual({ line: JSON.stringify(fitting), whole: true });
    const over = { s: 'x'.repeat(ARGUMENTS_SHOWN - 7) };
    expect(argumentsLine(over)).toEqual({
      line: `Arguments too long to show here: ${ARGUMENTS_SHOWN + 1} characters. Open the request.`,
      whole: false,
    });
    // A right-to-left override would show the arguments other than they are: not shown as whole.
    expect(argumentsLine({ to: 'evil\u202Eexe.txt' }).whole).toBe(false);
  });

  it("keep an agent's control and format characters out of what the person reads", () => {
    expect(plain('Pay\u202E 001 \u0007ACME\n\n now\u2028')).toBe('Pay 001 ACME now');
    expect(clip('abcdef', 4)).toBe('abc…');
    expect(clip('😀😀😀', 3)).toBe('😀😀😀');
    const m = askMessage({ ...request, display: { title: 'Approve\u202Elaer', summary: 'line one\nline two' } }, offer);
    expect(m.title).toBe('Approve laer');
    expect(m.body.split('\n')[0]).toBe('line one line two');
  });

  it('fit what a push service takes, dropping the summary before the arguments', () => {
    const wide = '界'.repeat(400);
    const long = {
      ...offer,
      approve: { ...offer.approve!, token: 'a'.repeat(1000) },
      reject: { ...offer.reject!, token: 'r'.repeat(1000) },
    };
    const args = { note: '界'.repeat(280) };
    const whole = askMessage({ ...request, arguments: args, display: { title: wide } }, long, wide);
    const m = askMessage({ ...request, arguments: args, display: { title: wide, summary: wide } }, long, wide);
    expect(fits(m)).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(m))).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
    expect(m).toEqual(whole); // the summary went; the note, the title and the arguments stayed
    expect(m.body).toContain(JSON.stringify(args));
  });

  it('tell the outcome without actions: who decided and where, or that time ran out', () => {
    const call = { ...request, display: { title: 'Pay ACME' } };
    expect(
      outcomeMessage({
        tenantId: 'default',
        outcome: 'rejected',
        toolCall: call,
        by: { id: 'ann', name: 'Ann', via: 'slack' },
        reason: 'wrong account',
      }),
    ).toEqual({
      v: 1,
      kind: 'outcome',
      toolCallId: 'tc_9',
      toolName: 'wire_money',
      title: 'Rejected: Pay ACME',
      body: 'wire_money · by Ann via Slack\nwrong account',
    });
    expect(
      outcomeMessage({ tenantId: 'default', outcome: 'expired', toolCall: call, by: { id: 'system', via: 'system' } })
        .body,
    ).toBe('wire_money · no one decided it in time');
    expect(
      outcomeMessage({
        tenantId: 'default',
        outcome: 'approved',
        toolCall: call,
        by: { id: 'bob', name: 'Bob', via: 'email', onBehalfOf: { id: 'ann', name: 'Ann' } },
      }).body,
    ).toMatch(/^wire_money · by Bob for Ann via/);
  });
});
