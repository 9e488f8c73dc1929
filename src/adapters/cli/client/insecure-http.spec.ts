import { Command } from 'commander';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { saveLogin, type StoredLoginEntry } from '../login/credentials';
import { addLoginCommands } from '../login/login-commands';
import { ApiClient, CliError, connection, EXIT, isInsecure, isLoopback } from './api-client';

const entry = (url: string): StoredLoginEntry => ({
  url,
  issuer: 'https://idp.example.test',
  clientId: 'tollgate-cli',
  access_token: 'at',
  refresh_token: 'rt',
  expires_at: 4_000_000_000,
  obtained_at: 1_000,
});

describe('a login over plain http', () => {
  let dir: string;
  const before = process.env.XDG_CONFIG_HOME;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-insecure-'));
    process.env.XDG_CONFIG_HOME = dir;
  });
  afterEach(() => {
    if (before === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = before;
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts as loopback only 127.0.0.0/8, ::1 and localhost', () => {
    for (const u of [
      'http://127.0.0.1:8080',
      'http://127.1',
      'http://127.255.0.9',
      'http://[::1]:80',
      'http://LOCALHOST',
    ])
      expect([u, isLoopback(u)]).toEqual([u, true]);
    for (const u of ['http://10.0.0.1', 'http://tollgate.example.test', 'http://127.0.0.1.nip.io', 'http://[::2]'])
      expect([u, isLoopback(u)]).toEqual([u, false]);
    expect(isInsecure('http://tollgate.example.test')).toBe(true);
    expect(isInsecure('https://tollgate.example.test')).toBe(false);
    expect(isInsecure('http://127.0.0.1:8080')).toBe(false);
  });

  it('tollgate login refuses an http server off this machine (exit 2) before asking it anything', async () => {
    const program = new Command().exitOverride();
    addLoginCommands(program);
    // Were the server asked, an unresolvable name would be "cannot reach" (exit 3), not this refusal.
    const refused = program.parseAsync(['node', 'tollgate', 'login', '--url', 'http://tollgate.invalid']);
    await expect(refused).rejects.toBeInstanceOf(CliError);
    await expect(refused).rejects.toMatchObject({
      exitCode: EXIT.usage,
      message: expect.stringContaining('refusing to use a login over plain http with http://tollgate.invalid'),
    });
  });

  it("never sends a stored login's token to an http URL off this machine; https and loopback are fine", () => {
    for (const url of ['http://tollgate.example.test', 'https://tollgate.example.test', 'http://127.0.0.1:8080'])
      saveLogin(entry(url));
    const conn = connection({ url: 'http://tollgate.example.test' }, {});
    expect(conn.login).toBeDefined();
    expect(() => new ApiClient(conn)).toThrow(
      expect.objectContaining({ exitCode: EXIT.usage, message: expect.stringContaining('plain http') }),
    );
    expect(() => new ApiClient(connection({ url: 'https://tollgate.example.test' }, {}))).not.toThrow();
    expect(() => new ApiClient(connection({ url: 'http://127.0.0.1:8080' }, {}))).not.toThrow();
    // A token given explicitly is the caller's choice: not a stored login.
    expect(() => new ApiClient(connection({ url: 'http://tollgate.example.test', token: 't' }, {}))).not.toThrow();
  });
});
