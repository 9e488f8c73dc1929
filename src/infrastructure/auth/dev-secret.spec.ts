import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../config/config';
import { resolveAuth } from './dev-secret';

describe('resolveAuth', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'tollgate-auth-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const config = (env: Record<string, string>) => loadConfig({ TOLLGATE_DATA_DIR: dataDir, ...env });

  it('refuses a TOLLGATE_JWT_SECRET under 32 bytes, saying how long it is and what is needed', () => {
    for (const [secret, bytes] of [
      ['k', '1 byte'],
      ['x'.repeat(31), '31 bytes'],
      ['é'.repeat(15), '30 bytes'],
    ]) {
      expect(() => resolveAuth(config({ TOLLGATE_JWT_SECRET: secret }))).toThrow(ConfigError);
      expect(() => resolveAuth(config({ TOLLGATE_JWT_SECRET: secret }))).toThrow(
        `TOLLGATE_JWT_SECRET is ${bytes}: HS256 needs at least 32 bytes`,
      );
    }
  });

  it('accepts a secret of 32 bytes or more', () => {
    expect(resolveAuth(config({ TOLLGATE_JWT_SECRET: 'x'.repeat(32) })).auth).toMatchObject({
      secret: 'x'.repeat(32),
      devSecret: false,
    });
    expect(resolveAuth(config({ TOLLGATE_JWT_SECRET: 'é'.repeat(16) })).auth.secret).toBe('é'.repeat(16));
  });

  it('makes a dev secret of 32 random bytes in embedded mode', () => {
    const { auth } = resolveAuth(config({}));
    expect(auth.devSecret).toBe(true);
    expect(Buffer.from(auth.secret!, 'base64url').length).toBe(32);
  });
});
