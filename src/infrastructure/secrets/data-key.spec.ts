import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ConfigError, TollgateConfig } from '../config/config';
import { DataKeyVault, dataKeyPath, loadDataKeys } from './data-key';

const dir = () => mkdtempSync(join(tmpdir(), 'tollgate-data-key-'));
const vault = (c: Partial<TollgateConfig>) => new DataKeyVault({ dataDir: dir(), ...c } as TollgateConfig);
const sealed = { redact: ['password'], arguments: { password: 'hunter2', n: 1 } };

describe('the data key', () => {
  it('is made once in the data dir on the embedded default, mode 0600, and used again', () => {
    const dataDir = dir();
    const a = new DataKeyVault({ dataDir } as TollgateConfig);
    expect(statSync(dataKeyPath(dataDir)).mode & 0o777).toBe(0o600);
    const b = new DataKeyVault({ dataDir } as TollgateConfig);
    expect(b.activeKeyId).toBe(a.activeKeyId);
    expect(b.digest('x', 't1')).toBe(a.digest('x', 't1'));
    expect(b.unseal(a.seal(sealed, 't1', 'c1'), 't1', 'c1')).toEqual(sealed);
  });

  it('with DATABASE_URL and no key: none is made, and masking or sealing is refused (data_key_missing)', () => {
    const dataDir = dir();
    const v = new DataKeyVault({ dataDir, databaseUrl: 'postgres://x' } as TollgateConfig);
    expect(() => readFileSync(dataKeyPath(dataDir))).toThrow();
    expect(() => v.digest('x', 't1')).toThrow(expect.objectContaining({ code: 'data_key_missing' }));
    expect(() => v.seal(sealed, 't', 'c')).toThrow(expect.objectContaining({ code: 'data_key_missing' }));
  });

  it('takes TOLLGATE_DATA_KEY (base64 or hex) and refuses a key that is not 32 bytes, without quoting it', () => {
    const key = randomBytes(32);
    expect(vault({ dataKey: key.toString('base64') }).digest(1, 't1')).toBe(
      vault({ dataKey: key.toString('hex') }).digest(1, 't1'),
    );
    const e = (() => {
      try {
        loadDataKeys({ dataKey: 'c2hvcnQtc2VjcmV0', dataDir: dir() });
      } catch (err) {
        return err as Error;
      }
    })();
    expect(e).toBeInstanceOf(ConfigError);
    expect(e!.message).not.toContain('c2hvcnQtc2VjcmV0');
  });

  it('rotates: the first key seals, an older one still opens', () => {
    const old = randomBytes(32).toString('base64');
    const next = randomBytes(32).toString('base64');
    const before = vault({ dataKey: old }).seal(sealed, 't', 'c');
    const file = join(dir(), 'keys');
    writeFileSync(file, `${next}\n${old}\n`);
    const rotated = vault({ dataKeyFile: file });
    expect(rotated.unseal(before, 't', 'c')).toEqual(sealed);
    expect(rotated.seal(sealed, 't', 'c').split('.')[1]).toBe(rotated.activeKeyId);
    expect(() => vault({ dataKey: next }).unseal(before, 't', 'c')).toThrow(
      expect.objectContaining({ code: 'sealed_arguments_unreadable' }),
    );
  });

  it('binds a sealed value to its tenant and conversation, and refuses a tampered one', () => {
    const v = vault({ dataKey: randomBytes(32).toString('base64') });
    const s = v.seal(sealed, 't1', 'c1');
    expect(s).not.toContain('hunter2');
    expect(() => v.unseal(s, 't2', 'c1')).toThrow(expect.objectContaining({ code: 'sealed_arguments_unreadable' }));
    expect(() => v.unseal(s, 't1', 'c2')).toThrow(expect.objectContaining({ code: 'sealed_arguments_unreadable' }));
    const parts = s.split('.');
    parts[4] = parts[4].slice(0, 8);
    expect(() => v.unseal(parts.join('.'), 't1', 'c1')).toThrow(
      expect.objectContaining({ code: 'sealed_arguments_unreadable' }),
    );
  });

  it('digests are keyed: another key gives another digest of the same value', () => {
    const a = vault({ dataKey: randomBytes(32).toString('base64') });
    const b = vault({ dataKey: randomBytes(32).toString('base64') });
    expect(a.digest('hunter2', 't1')).toMatch(/^[0-9a-f]{12}$/);
    expect(a.digest('hunter2', 't1')).not.toBe(b.digest('hunter2', 't1'));
  });

  it('digests are per tenant: one tenant cannot compute the markers another sees', () => {
    const a = vault({ dataKey: randomBytes(32).toString('base64') });
    expect(a.digest('hunter2', 'acme')).toBe(a.digest('hunter2', 'acme'));
    expect(a.digest('hunter2', 'acme')).not.toBe(a.digest('hunter2', 'globex'));
  });
});
