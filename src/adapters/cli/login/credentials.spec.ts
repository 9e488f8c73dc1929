import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  credentialsPath,
  CredentialsError,
  findLogin,
  readLogins,
  removeLogin,
  saveLogin,
  type StoredLoginEntry,
} from './credentials';
import { printable } from '../safe-text';
import { bearerOf, expiryOf } from './session';

const entry = (url: string, extra: Partial<StoredLoginEntry> = {}): StoredLoginEntry => ({
  url,
  issuer: 'https://idp.example.test',
  clientId: 'tollgate-cli',
  access_token: 'at',
  refresh_token: 'rt',
  expires_at: 2_000,
  obtained_at: 1_000,
  ...extra,
});

describe('the credentials file', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-cred-'));
    path = join(dir, 'tollgate', 'credentials.json');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lives in $XDG_CONFIG_HOME/tollgate, else the platform config dir', () => {
    expect(credentialsPath({ XDG_CONFIG_HOME: '/x/cfg' }, 'linux')).toBe('/x/cfg/tollgate/credentials.json');
    expect(credentialsPath({ XDG_CONFIG_HOME: 'relative' }, 'linux')).toBe(
      join(homedir(), '.config', 'tollgate', 'credentials.json'),
    );
    expect(credentialsPath({}, 'linux')).toBe(join(homedir(), '.config', 'tollgate', 'credentials.json'));
    expect(credentialsPath({}, 'darwin')).toBe(
      join(homedir(), 'Library', 'Application Support', 'tollgate', 'credentials.json'),
    );
    expect(credentialsPath({ APPDATA: '/appdata' }, 'win32')).toBe(join('/appdata', 'tollgate', 'credentials.json'));
  });

  it('keeps one login per server, readable by the user only, replaced whole', () => {
    expect(readLogins(path)).toEqual([]);
    saveLogin(entry('https://a.test'), path);
    saveLogin(entry('https://b.test'), path);
    saveLogin(entry('https://a.test', { access_token: 'at2' }), path);
    expect(readLogins(path).map((l) => [l.url, l.access_token])).toEqual([
      ['https://b.test', 'at'],
      ['https://a.test', 'at2'],
    ]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'tollgate')).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(dir, 'tollgate'))).toEqual(['credentials.json']); // no temporary file left behind

    expect(removeLogin('https://a.test', path)).toBe(true);
    expect(findLogin('https://a.test', path)).toBeUndefined();
    expect(removeLogin('https://a.test', path)).toBe(false);
    expect(removeLogin('https://b.test', path)).toBe(true);
    expect(readdirSync(join(dir, 'tollgate'))).toEqual([]); // the last login takes the file with it
  });

  it('tightens a config dir others could read', () => {
    mkdirSync(join(dir, 'tollgate'), { mode: 0o755 });
    chmodSync(join(dir, 'tollgate'), 0o755);
    saveLogin(entry('https://a.test'), path);
    expect(statSync(join(dir, 'tollgate')).mode & 0o777).toBe(0o700);
  });

  it('refuses a file that is not its own rather than overwrite it', () => {
    mkdirSync(join(dir, 'tollgate'));
    writeFileSync(path, '{"logins": [{"url": "https://a.test"}]}');
    expect(() => readLogins(path)).toThrow(CredentialsError);
    expect(() => saveLogin(entry('https://b.test'), path)).toThrow(/not a Tollgate credentials file/);
    writeFileSync(path, 'not json');
    expect(() => readLogins(path)).toThrow(/not valid JSON/);
    expect(readFileSync(path, 'utf8')).toBe('not json');
  });
});

describe('the token a login sends', () => {
  const jwt = (claims: object) =>
    `${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;

  it("is the access token when it is a JWT for the CLI's client, else the ID token", () => {
    const idt = jwt({ sub: 'ann', aud: 'tollgate-cli', exp: 1_800 });
    const forUs = jwt({ sub: 'ann', aud: ['tollgate-cli', 'other'], exp: 1_500 });
    const c = { clientId: 'tollgate-cli', id_token: idt };
    expect(bearerOf({ ...c, access_token: forUs })).toBe(forUs);
    expect(bearerOf({ ...c, access_token: jwt({ sub: 'ann', aud: 'tollgate-cli' }) })).not.toBe(idt);
    // Entra ID's access token for Microsoft Graph, Okta's for api://default: not Tollgate's to verify.
    expect(bearerOf({ ...c, access_token: jwt({ sub: 'ann', aud: '00000003-0000-0000-c000-000000000000' }) })).toBe(
      idt,
    );
    expect(bearerOf({ ...c, access_token: 'opaque-token' })).toBe(idt); // Google's
    expect(bearerOf({ clientId: 'tollgate-cli', access_token: 'opaque-token' })).toBe('opaque-token');
  });

  it("expires at the sent token's exp, else at expires_in's", () => {
    expect(expiryOf(entry('https://a.test', { access_token: jwt({ aud: 'tollgate-cli', exp: 1_500 }) }))).toBe(1_500);
    expect(expiryOf(entry('https://a.test', { access_token: 'opaque', id_token: jwt({ exp: 1_800 }) }))).toBe(1_800);
    expect(expiryOf(entry('https://a.test', { access_token: 'opaque' }))).toBe(2_000);
  });
});

describe("the provider's text on the terminal", () => {
  it('loses control characters, so no escape sequence can rewrite what the person reads, and is bounded', () => {
    expect(printable('https://idp.test/device\x1b[2K\x1b[1A\rhttps://evil.test\u009b31m')).toBe(
      'https://idp.test/device[2K[1Ahttps://evil.test31m',
    );
    expect(printable('x'.repeat(100), 10)).toBe(`${'x'.repeat(9)}…`);
  });
});
