import { LOGIN_TTL_S, LoginSealer } from './login-cookie';
import { sameOriginPath } from './sso.controller';

const T = { state: 's'.repeat(43), nonce: 'n'.repeat(43), codeVerifier: 'v'.repeat(43), returnTo: '/#/calls/tc_1' };

describe('the sealed login transaction', () => {
  const sealer = new LoginSealer('the-client-secret');
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('opens what it sealed, and nothing of it is readable in the cookie', () => {
    const sealed = sealer.seal(T, now);
    expect(sealed).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain('sss');
    expect(sealer.open(sealed, now + 1000)).toEqual(T);
  });

  it('opens one carrying the longest return_to the login route takes', () => {
    const long = { ...T, returnTo: '/' + 'a'.repeat(2047) };
    const sealed = sealer.seal(long, now);
    expect(sealed.length).toBeLessThan(4096 - '__Host-tollgate_login_0123456789abcdef='.length);
    expect(sealer.open(sealed, now)).toEqual(long);
  });

  it('refuses it once older than the sign-in may take', () => {
    const sealed = sealer.seal(T, now);
    expect(sealer.open(sealed, now + (LOGIN_TTL_S - 1) * 1000)).toEqual(T);
    expect(sealer.open(sealed, now + LOGIN_TTL_S * 1000)).toBeUndefined();
  });

  it('refuses one changed in any byte, sealed with another secret, or not a sealed value at all', () => {
    const sealed = sealer.seal(T, now);
    const raw = Buffer.from(sealed, 'base64url');
    for (let i = 0; i < raw.length; i += 7) {
      const changed = Buffer.from(raw);
      changed[i] ^= 1;
      expect(sealer.open(changed.toString('base64url'), now)).toBeUndefined();
    }
    expect(new LoginSealer('another-secret').open(sealed, now)).toBeUndefined();
    for (const junk of ['', 'x', '!!!', 'a'.repeat(5000), sealed + '.']) expect(sealer.open(junk, now)).toBeUndefined();
  });
});

describe('return_to', () => {
  it('keeps a path on this server, with its query and hash', () => {
    expect(sameOriginPath(undefined)).toBe('/');
    expect(sameOriginPath('')).toBe('/');
    expect(sameOriginPath('/')).toBe('/');
    expect(sameOriginPath('/#/calls/tc_1')).toBe('/#/calls/tc_1');
    expect(sameOriginPath('/a/../b?x=1')).toBe('/b?x=1');
  });

  it('refuses anything that could leave it', () => {
    for (const bad of [
      '//evil.example',
      '/.//evil.example/phish', // the URL parser resolves these to `//evil.example/phish`
      '/..//evil.example/phish',
      '/%2e//evil.example/phish',
      '/a/..//evil.example',
      '/\\evil.example',
      'https://evil.example/',
      'evil.example',
      'javascript:alert(1)',
      '/\tevil',
      '/x\r\nSet-Cookie: a=b',
      '/' + 'a'.repeat(2048),
      ['/a', '/b'],
      42,
    ])
      expect(sameOriginPath(bad)).toBeUndefined();
  });
});
