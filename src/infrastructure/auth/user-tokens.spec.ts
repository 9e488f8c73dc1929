import { SignJWT } from 'jose';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_USER_TOKEN_LENGTH } from '../../application/ports/user-token.port';
import { DomainError } from '../../domain/shared/domain-error';
import { AuthConfig, ConfigError, loadConfig } from '../config/config';
import { resolveAuth } from './dev-secret';
import { JwtVerifier } from './jwt-verifier';
import { JwtUserTokens } from './user-tokens';

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const API = 'tollgate-api';
const APP = 'agent-app';

function sign(claims: Record<string, unknown>, opts: { aud?: string | string[]; ttl?: string; secret?: string } = {}) {
  let jwt = new SignJWT({ tenant: 'acme', ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime(opts.ttl ?? '10m');
  if (opts.aud !== undefined) jwt = jwt.setAudience(opts.aud);
  return jwt.sign(new TextEncoder().encode(opts.secret ?? SECRET));
}

function tokens(auth: Partial<AuthConfig> = {}) {
  const cfg: AuthConfig = { secret: SECRET, audience: API, userTokenAudiences: [APP], devSecret: false, ...auth };
  const verifier = new JwtVerifier(cfg);
  return { users: new JwtUserTokens(cfg, verifier), verifier };
}

/** The problem code a verification is refused with (and that its detail never carries the token). */
async function refusal(p: Promise<unknown>, token: string): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).kind).toBe('invalid');
    expect((e as Error).message).not.toContain(token.split('.').pop()!);
    return (e as DomainError).code;
  }
  throw new Error('verified');
}

describe('JwtUserTokens', () => {
  it("verifies a token for the agent's application: the sub, the roles and the name it carries", async () => {
    const token = await sign({ sub: 'ann', roles: ['finance', 'finance', 'ops'], name: 'Ann' }, { aud: APP });
    expect(await tokens().users.verify(token, 'acme')).toEqual({ id: 'ann', roles: ['finance', 'ops'], name: 'Ann' });
  });

  it('takes a token listing several audiences when one is the application and none is Tollgate', async () => {
    const token = await sign({ sub: 'ann' }, { aud: ['other-app', APP] });
    expect(await tokens().users.verify(token, 'acme')).toEqual({ id: 'ann', roles: [] });
  });

  it('leaves out a name longer than a named user may have', async () => {
    const token = await sign({ sub: 'ann', name: 'A'.repeat(257) }, { aud: APP });
    expect(await tokens().users.verify(token, 'acme')).toEqual({ id: 'ann', roles: [] });
  });

  it('refuses every token when no audience is configured: user_token_not_configured', async () => {
    const token = await sign({ sub: 'ann' }, { aud: APP });
    expect(await refusal(tokens({ userTokenAudiences: undefined }).users.verify(token, 'acme'), token)).toBe(
      'user_token_not_configured',
    );
  });

  it("refuses a token for Tollgate's own audience before checking its signature: user_token_is_credential", async () => {
    for (const aud of [API, [APP, API]]) {
      const token = await sign({ sub: 'ann' }, { aud, secret: 'not-the-secret-but-long-enough-0123456' });
      expect(await refusal(tokens().users.verify(token, 'acme'), token)).toBe('user_token_is_credential');
    }
  });

  it('refuses a token the bearer verifier would take as it is (no TOLLGATE_JWT_AUDIENCE)', async () => {
    const { users, verifier } = tokens({ audience: undefined });
    const token = await sign({ sub: 'ann' }, { aud: APP });
    await expect(verifier.verify(token)).resolves.toMatchObject({ id: 'ann' }); // it is a credential indeed
    expect(await refusal(users.verify(token, 'acme'), token)).toBe('user_token_is_credential');
  });

  it('refuses what does not verify, an agent, another tenant, too many roles: invalid_user_token', async () => {
    const cases = [
      await sign({ sub: 'ann' }, { aud: 'someone-else' }),
      await sign({ sub: 'ann' }),
      await sign({ sub: 'ann' }, { aud: APP, secret: 'not-the-secret-but-long-enough-0123456' }),
      await sign({ sub: 'ann' }, { aud: APP, ttl: '2 days' }), // longer than TOLLGATE_JWT_MAX_TTL allows
      await sign({}, { aud: APP }),
      await sign({ sub: 'bot', roles: ['agent', 'admin'] }, { aud: APP }),
      await sign({ sub: 'ann', tenant: 'globex' }, { aud: APP }),
      await sign({ sub: 'ann', roles: Array.from({ length: 65 }, (_, i) => `r${i}`) }, { aud: APP }),
      await sign({ sub: 'ann', roles: ['r'.repeat(129)] }, { aud: APP }),
      'not-a-jwt',
      'x'.repeat(MAX_USER_TOKEN_LENGTH + 1),
    ];
    const { users } = tokens();
    for (const token of cases) expect(await refusal(users.verify(token, 'acme'), token)).toBe('invalid_user_token');
  });

  it('refuses an expired token, saying so without the token', async () => {
    const token = await new SignJWT({ tenant: 'acme' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('ann')
      .setAudience(APP)
      .setIssuedAt(Math.floor(Date.now() / 1000) - 900)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 300)
      .sign(new TextEncoder().encode(SECRET));
    await expect(tokens().users.verify(token, 'acme')).rejects.toThrow(/user\.token does not verify: "exp"/);
  });
});

describe('TOLLGATE_USER_TOKEN_AUDIENCE', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'tollgate-user-tokens-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = (env: Record<string, string>) =>
    loadConfig({ TOLLGATE_DATA_DIR: dataDir, TOLLGATE_JWT_SECRET: SECRET, ...env });

  it('is a comma-separated list, blanks and repeats dropped; unset or blank: none', () => {
    expect(
      config({ TOLLGATE_USER_TOKEN_AUDIENCE: ' agent-app, ,other-app,agent-app ' }).auth.userTokenAudiences,
    ).toEqual(['agent-app', 'other-app']);
    expect(config({}).auth.userTokenAudiences).toBeUndefined();
    expect(config({ TOLLGATE_USER_TOKEN_AUDIENCE: ' , ' }).auth.userTokenAudiences).toBeUndefined();
  });

  it("may not name an audience Tollgate's bearer tokens have (TOLLGATE_JWT_AUDIENCE, an OIDC client id)", () => {
    expect(() =>
      resolveAuth(config({ TOLLGATE_JWT_AUDIENCE: API, TOLLGATE_USER_TOKEN_AUDIENCE: `${APP},${API}` })),
    ).toThrow(ConfigError);
    const oidc = {
      TOLLGATE_OIDC_ISSUER: 'https://idp.example.com',
      TOLLGATE_OIDC_CLIENT_ID: 'tollgate-web',
      TOLLGATE_OIDC_CLIENT_SECRET: 'web-secret',
      TOLLGATE_OIDC_CLI_CLIENT_ID: 'tollgate-cli',
    };
    for (const clash of ['tollgate-web', 'tollgate-cli'])
      expect(() => resolveAuth(config({ ...oidc, TOLLGATE_USER_TOKEN_AUDIENCE: clash }))).toThrow(
        `TOLLGATE_USER_TOKEN_AUDIENCE lists ${clash}`,
      );
    expect(
      resolveAuth(config({ ...oidc, TOLLGATE_JWT_AUDIENCE: API, TOLLGATE_USER_TOKEN_AUDIENCE: APP })).auth
        .userTokenAudiences,
    ).toEqual([APP]);
  });
});
