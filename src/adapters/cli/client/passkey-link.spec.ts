import { needsPasskey, passkeyCardUrl, problemCardUrl } from './passkey-link';

describe('links to the card of a call that needs a passkey', () => {
  it('reads approval.stepUp', () => {
    expect(needsPasskey({ approval: { stepUp: 'passkey' } })).toBe(true);
    expect(needsPasskey({ approval: {} })).toBe(false);
    expect(needsPasskey({})).toBe(false);
  });

  it('go to localhost for a loopback or unspecified IP (browsers refuse passkeys on an IP), elsewhere as given', () => {
    expect(passkeyCardUrl('http://127.0.0.1:8080', 'tc_1')).toBe('http://localhost:8080/#/calls/tc_1');
    expect(passkeyCardUrl('http://[::1]:8080/', 'tc_1')).toBe('http://localhost:8080/#/calls/tc_1');
    expect(passkeyCardUrl('http://0.0.0.0:8080', 'tc_1')).toBe('http://localhost:8080/#/calls/tc_1');
    expect(passkeyCardUrl('https://tollgate.example.com/base/', 'tc 1')).toBe(
      'https://tollgate.example.com/base/#/calls/tc%201',
    );
  });

  it("take a problem's card only when it is a card path", () => {
    const base = 'http://127.0.0.1:8080';
    expect(problemCardUrl(base, { card: '/#/calls/tc_1', stepUp: 'passkey' })).toBe(
      'http://localhost:8080/#/calls/tc_1',
    );
    expect(problemCardUrl(base, { card: '/#/calls/tc_1' })).toBe('http://127.0.0.1:8080/#/calls/tc_1');
    expect(problemCardUrl(base, { card: 'https://evil.example/#/calls/tc_1' })).toBeUndefined();
    expect(problemCardUrl(base, { card: '/#/calls/tc_1\u001b[2J' })).toBeUndefined();
    expect(problemCardUrl(base, {})).toBeUndefined();
  });
});
