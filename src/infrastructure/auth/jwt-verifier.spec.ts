import { InvalidTokenError, JwtVerifier, mintToken } from './jwt-verifier';

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';

describe('JwtVerifier remembering verified tokens', () => {
  afterEach(() => jest.useRealTimers());

  it('verifies a token once and answers it again from memory, each caller its own principal', async () => {
    const verifier = new JwtVerifier({ secret: SECRET, devSecret: false });
    const token = await mintToken(SECRET, { sub: 'bot', roles: ['agent'], tenant: 'acme' }, '1h');
    const first = await verifier.verify(token);
    expect(verifier.cachedTokens).toBe(1);
    const second = await verifier.verify(token);
    expect(second).toEqual(first);
    expect(second).not.toBe(first);
    (second.roles as string[]).push('admin'); // a caller that changes its copy changes nobody else's
    expect((await verifier.verify(token)).roles).toEqual(['agent']);
  });

  it('never serves a token past its exp', async () => {
    jest.useFakeTimers({
      now: new Date('2026-01-01T00:00:00Z'),
      doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'],
    });
    const verifier = new JwtVerifier({ secret: SECRET, devSecret: false });
    const token = await mintToken(SECRET, { sub: 'bot', roles: ['agent'] }, '60s');
    await verifier.verify(token);
    expect(verifier.cachedTokens).toBe(1);
    jest.setSystemTime(new Date('2026-01-01T00:02:00Z')); // exp + 60 s, past the 30 s clock tolerance
    await expect(verifier.verify(token)).rejects.toBeInstanceOf(InvalidTokenError);
    expect(verifier.cachedTokens).toBe(0);
  });

  it('remembers nothing of a token it refuses', async () => {
    const verifier = new JwtVerifier({ secret: SECRET, devSecret: false });
    const forged = await mintToken('another-secret-of-at-least-32-bytes!', { sub: 'bot', roles: ['admin'] });
    await expect(verifier.verify(forged)).rejects.toBeInstanceOf(InvalidTokenError);
    await expect(verifier.verify(forged)).rejects.toBeInstanceOf(InvalidTokenError);
    expect(verifier.cachedTokens).toBe(0);
  });
});

describe('JwtVerifier and the email claim', () => {
  it('keeps a verified or unqualified email, and leaves out one the issuer says it has not verified', async () => {
    const { SignJWT } = await import('jose');
    const verifier = new JwtVerifier({ secret: SECRET, devSecret: false });
    const token = (email_verified?: boolean) =>
      new SignJWT({
        roles: ['approver'],
        email: 'ann@acme.example',
        ...(email_verified === undefined ? {} : { email_verified }),
      })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('eve')
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(SECRET));
    expect((await verifier.verify(await token(false))).email).toBeUndefined();
    expect((await verifier.verify(await token(true))).email).toBe('ann@acme.example');
    expect((await verifier.verify(await token())).email).toBe('ann@acme.example');
  });
});
