import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config';
import { oidcConfig } from './oidc-config';

const BASE = {
  TOLLGATE_OIDC_ISSUER: 'https://idp.example.com/realms/acme',
  TOLLGATE_OIDC_CLIENT_ID: 'tollgate',
  TOLLGATE_OIDC_CLIENT_SECRET: 's3cret',
};

describe('single sign-on settings (TOLLGATE_OIDC_*)', () => {
  it('is off without an issuer, and refuses other OIDC settings without one', () => {
    expect(oidcConfig({})).toBeUndefined();
    expect(() => oidcConfig({ TOLLGATE_OIDC_CLIENT_ID: 'x' })).toThrow(
      'TOLLGATE_OIDC_CLIENT_ID set without TOLLGATE_OIDC_ISSUER',
    );
  });

  it('reads the defaults: scopes, roles claim, fixed tenant "default", the CLI client, 12 h and 1 h', () => {
    expect(oidcConfig(BASE)).toEqual({
      issuer: 'https://idp.example.com/realms/acme',
      providerName: 'idp.example.com',
      clientId: 'tollgate',
      clientSecret: 's3cret',
      cliClientId: 'tollgate',
      scopes: ['openid', 'profile', 'email'],
      rolesClaim: 'roles',
      roleMap: {},
      tenant: { fixed: 'default' },
      sessionTtlSeconds: 43200,
      sessionIdleSeconds: 3600,
    });
  });

  it('reads every setting', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oidc-'));
    writeFileSync(join(dir, 'secret'), 'from-a-file\n');
    const { TOLLGATE_OIDC_CLIENT_SECRET: _, ...noSecret } = BASE;
    expect(
      oidcConfig({
        ...noSecret,
        TOLLGATE_OIDC_CLIENT_SECRET_FILE: join(dir, 'secret'),
        TOLLGATE_OIDC_NAME: 'Acme SSO',
        TOLLGATE_OIDC_CLI_CLIENT_ID: 'tollgate-cli',
        TOLLGATE_OIDC_SCOPES: 'openid,email groups',
        TOLLGATE_OIDC_ROLES_CLAIM: 'groups',
        TOLLGATE_OIDC_ROLE_MAP: 'payments-leads=approver, secops=admin+approver,audit=auditor',
        TOLLGATE_OIDC_TENANT_CLAIM: 'org',
        TOLLGATE_SESSION_TTL: '1h',
        TOLLGATE_SESSION_IDLE_TIMEOUT: '600',
      }),
    ).toMatchObject({
      clientSecret: 'from-a-file',
      providerName: 'Acme SSO',
      cliClientId: 'tollgate-cli',
      scopes: ['openid', 'email', 'groups'],
      rolesClaim: 'groups',
      roleMap: { 'payments-leads': ['approver'], secops: ['admin', 'approver'], audit: ['auditor'] },
      tenant: { claim: 'org' },
      sessionTtlSeconds: 3600,
      sessionIdleSeconds: 600,
    });
  });

  it('refuses what cannot work, saying what to set', () => {
    for (const [env, message] of [
      [{ ...BASE, TOLLGATE_OIDC_ISSUER: 'http://idp.example.com' }, 'must be https'],
      [{ ...BASE, TOLLGATE_OIDC_ISSUER: 'http://127.evil.example' }, 'must be https'], // a domain, not 127.0.0.0/8
      [{ ...BASE, TOLLGATE_OIDC_ISSUER: 'not a url' }, 'must be a URL'],
      [{ ...BASE, TOLLGATE_OIDC_CLIENT_ID: '' }, 'needs TOLLGATE_OIDC_CLIENT_ID'],
      [{ ...BASE, TOLLGATE_OIDC_CLIENT_SECRET: '' }, 'needs TOLLGATE_OIDC_CLIENT_SECRET'],
      [{ ...BASE, TOLLGATE_OIDC_SCOPES: 'profile email' }, 'must include openid'],
      [{ ...BASE, TOLLGATE_OIDC_ROLE_MAP: 'bots=agent' }, 'people never sign in as agents'],
      [{ ...BASE, TOLLGATE_OIDC_ROLE_MAP: 'nogroup' }, 'is not <group>=<role>'],
      [{ ...BASE, TOLLGATE_OIDC_TENANT: 'a', TOLLGATE_OIDC_TENANT_CLAIM: 'org' }, 'not both'],
      [{ ...BASE, TOLLGATE_SESSION_TTL: '10' }, 'TOLLGATE_SESSION_TTL must be'],
      [{ ...BASE, TOLLGATE_SESSION_TTL: '31d' }, 'TOLLGATE_SESSION_TTL must be'],
      [{ ...BASE, TOLLGATE_SESSION_IDLE_TIMEOUT: 'an hour' }, 'TOLLGATE_SESSION_IDLE_TIMEOUT must be'],
    ] as const) {
      expect(() => oidcConfig(env)).toThrow(ConfigError);
      expect(() => oidcConfig(env)).toThrow(message);
    }
  });

  it('admits an http issuer only on loopback', () => {
    expect(oidcConfig({ ...BASE, TOLLGATE_OIDC_ISSUER: 'http://127.0.0.1:9000' })?.issuer).toBe(
      'http://127.0.0.1:9000',
    );
  });

  it('needs TOLLGATE_PUBLIC_URL unless the server listens on loopback (the redirect URI comes from it)', () => {
    expect(() => loadConfig({ ...BASE, HOST: '0.0.0.0' })).toThrow(
      'needs TOLLGATE_PUBLIC_URL when listening on 0.0.0.0',
    );
    expect(
      loadConfig({ ...BASE, HOST: '0.0.0.0', TOLLGATE_PUBLIC_URL: 'https://tollgate.example.com' }).oidc,
    ).toBeDefined();
    expect(loadConfig({ ...BASE }).oidc).toBeDefined(); // 127.0.0.1 by default
  });
});
