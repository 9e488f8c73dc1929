/** The web inbox's passkey helpers: which pages can use passkeys, what a failed prompt says, what a step-up binds. */
import type { AuditEvent } from '@tollgate/sdk';
import { departureFromDecision, departureFromEvent } from '../../web/src/inbox';
import {
  isCancelled,
  isIpAddressHost,
  localhostHref,
  needsPasskey,
  stepUpOf,
  stepUpRequest,
  webAuthnErrorText,
} from '../../web/src/passkeys';

describe('isIpAddressHost', () => {
  it.each([
    '127.0.0.1',
    '10.0.0.12',
    '192.168.1.1',
    '[::1]',
    '::1',
    '[fe80::1]',
    '[2001:db8::7]',
    '[::ffff:127.0.0.1]',
  ])('%s is an IP address: no passkeys there', (host) => {
    expect(isIpAddressHost(host)).toBe(true);
  });

  it.each(['localhost', 'tollgate.example.com', 'approvals.internal', '127.0.0.1.nip.io', '999.1.1.1', 'deadbeef'])(
    '%s is a name',
    (host) => {
      expect(isIpAddressHost(host)).toBe(false);
    },
  );
});

describe('localhostHref', () => {
  it('keeps the protocol, port, path, query and route', () => {
    expect(localhostHref({ protocol: 'http:', port: '8080', pathname: '/', search: '?x=1', hash: '#/passkeys' })).toBe(
      'http://localhost:8080/?x=1#/passkeys',
    );
  });

  it('leaves out a default port', () => {
    expect(localhostHref({ protocol: 'https:', port: '', pathname: '/', search: '', hash: '' })).toBe(
      'https://localhost/',
    );
  });
});

describe('a failed prompt', () => {
  const named = (name: string, message = 'x') => Object.assign(new Error(message), { name });

  it('dismissed, timed out or refused: cancelled, not an error', () => {
    expect(isCancelled(named('NotAllowedError'))).toBe(true);
    expect(webAuthnErrorText(named('NotAllowedError'))).toMatch(/^Cancelled\b.*nothing changed/);
  });

  it('anything else is an error in words', () => {
    expect(isCancelled(named('InvalidStateError'))).toBe(false);
    expect(webAuthnErrorText(named('InvalidStateError'))).toMatch(/already holds one of your passkeys/);
    expect(webAuthnErrorText(named('SecurityError'))).toMatch(/localhost/);
    expect(webAuthnErrorText(named('UnknownError', 'The authenticator broke'))).toBe('The authenticator broke');
    expect(isCancelled(null)).toBe(false);
  });
});

describe('needsPasskey and stepUpOf', () => {
  it('reads the rule’s step-up from a held call', () => {
    expect(needsPasskey({ approval: { stepUp: 'passkey' } as any })).toBe(true);
    expect(needsPasskey({ approval: { approvers: ['approver'] } as any })).toBe(false);
    expect(needsPasskey({ approval: undefined } as any)).toBe(false);
  });

  it('reads the passkey a decision was made with', () => {
    const stepUp = { method: 'passkey', credentialId: 'abc', aaguid: '0000', userVerified: true } as const;
    expect(stepUpOf({ outcome: 'approved', stepUp })).toEqual(stepUp);
    expect(stepUpOf({ outcome: 'approved' })).toBeUndefined();
    expect(stepUpOf(undefined)).toBeUndefined();
  });
});

describe('stepUpRequest', () => {
  it('binds the edited arguments an approval sends', () => {
    expect(stepUpRequest({ decision: 'approve', arguments: { amount: 5 } })).toEqual({ arguments: { amount: 5 } });
  });

  it('asks for the call’s own arguments otherwise', () => {
    expect(stepUpRequest({ decision: 'approve' })).toEqual({});
    expect(stepUpRequest({ decision: 'always_allow' })).toEqual({});
  });
});

describe('the note of a call that left', () => {
  const stepUp = { method: 'passkey', credentialId: 'abc', aaguid: '0000', userVerified: true };
  const call = { id: 'tc_1', toolName: 'wire_money', createdAt: '2025-01-01T10:00:00.000Z' };
  const decision = (extra: object) =>
    ({
      outcome: 'approved',
      by: { id: 'ann', name: 'Ann', via: 'web' },
      at: '2025-01-01T10:01:00.000Z',
      ...extra,
    }) as any;
  const approvedEvent = (data: Record<string, unknown>) =>
    ({
      type: 'ToolCallApproved',
      toolCallId: 'tc_1',
      toolName: 'wire_money',
      actor: { kind: 'person', id: 'ann', name: 'Ann', via: 'web' },
      data: { outcome: 'approved', via: 'web', decision: 'approve', ...data },
    }) as unknown as AuditEvent;

  it('says an approval was made with a passkey, from the decision or from the live event', () => {
    expect(departureFromDecision(call, decision({ stepUp }), 'me', 1).note).toBe(
      'approved by Ann via the web inbox with a passkey',
    );
    expect(departureFromEvent(approvedEvent({ stepUp: { ...stepUp, assertion: {} } }), 'ann', 1)?.note).toBe(
      'approved by you via the web inbox with a passkey',
    );
  });

  it('and nothing of the kind for one without', () => {
    expect(departureFromDecision(call, decision({}), 'me', 1).note).toBe('approved by Ann via the web inbox');
    expect(departureFromEvent(approvedEvent({}), 'me', 1)?.note).toBe('approved by Ann via the web inbox');
  });
});
