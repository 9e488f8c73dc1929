import { Inject, Injectable } from '@nestjs/common';
import canonicalize from 'canonicalize';
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ArgumentVault, SealedArguments } from '../../application/ports/argument-vault.port';
import { DomainError } from '../../domain/shared/domain-error';
import { ConfigError, TOLLGATE_CONFIG, TollgateConfig } from '../config/config';

/*
 * The data key: 32 random bytes that mask (HMAC digests) and seal (AES-256-GCM) secret arguments, kept outside the
 * database. From TOLLGATE_DATA_KEY or TOLLGATE_DATA_KEY_FILE (base64, base64url or hex; several keys separated by
 * commas or new lines: the first seals, all open, so a key can rotate); else, on the embedded default, the file
 * `data-key` in the data dir, made once with mode 0600 (as the dev JWT secret is). With DATABASE_URL and no key,
 * nothing secret is accepted (fail closed): a proposal that would need sealing is refused with `data_key_missing`.
 */

const FILE = 'data-key';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const FORMAT = 'v1';

interface DataKey {
  /** 8 hex digits naming the key (of a hash of it: the key itself is never shown). */
  kid: string;
  seal: Buffer;
  digest: Buffer;
}

export function dataKeyPath(dataDir: string): string {
  return join(dataDir, FILE);
}

/** The keys of one setting's text: each 32 bytes, in base64(url) or hex. Never quotes the text in an error. */
export function parseDataKeys(text: string, source: string): Buffer[] {
  const parts = text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (parts.length === 0) throw new ConfigError(`${source} is empty: give 32 random bytes (openssl rand -base64 32)`);
  return parts.map((p, i) => {
    const bytes = /^[0-9a-fA-F]{64}$/.test(p) ? Buffer.from(p, 'hex') : Buffer.from(p, 'base64');
    if (bytes.length !== KEY_BYTES)
      throw new ConfigError(
        `${source}: key ${i + 1} is not 32 bytes in base64 or hex (make one with openssl rand -base64 32)`,
      );
    return bytes;
  });
}

function derive(raw: Buffer): DataKey {
  const sub = (info: string) => Buffer.from(hkdfSync('sha256', raw, Buffer.alloc(0), info, KEY_BYTES));
  return {
    kid: createHash('sha256').update('tollgate data key id').update(raw).digest('hex').slice(0, 8),
    seal: sub('tollgate sealed arguments v1'),
    digest: sub('tollgate redaction digest v1'),
  };
}

/** The configured keys, or the embedded default's file (made now when missing); none with DATABASE_URL and no key. */
export function loadDataKeys(
  config: Pick<TollgateConfig, 'dataKey' | 'dataKeyFile' | 'databaseUrl' | 'dataDir'>,
): Buffer[] {
  if (config.dataKey && config.dataKeyFile)
    throw new ConfigError('Set either TOLLGATE_DATA_KEY or TOLLGATE_DATA_KEY_FILE, not both');
  if (config.dataKey) return parseDataKeys(config.dataKey, 'TOLLGATE_DATA_KEY');
  if (config.dataKeyFile) {
    let text: string;
    try {
      text = readFileSync(config.dataKeyFile, 'utf8');
    } catch (e) {
      throw new ConfigError(
        `TOLLGATE_DATA_KEY_FILE (${config.dataKeyFile}) cannot be read: ${(e as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
    return parseDataKeys(text, `TOLLGATE_DATA_KEY_FILE (${config.dataKeyFile})`);
  }
  if (config.databaseUrl) return [];
  const path = dataKeyPath(config.dataDir);
  if (existsSync(path)) return parseDataKeys(readFileSync(path, 'utf8'), `The data key file ${path}`);
  mkdirSync(config.dataDir, { recursive: true });
  try {
    writeFileSync(path, randomBytes(KEY_BYTES).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    chmodSync(path, 0o600);
  } catch (e) {
    // Another process made it first: use theirs.
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  return parseDataKeys(readFileSync(path, 'utf8'), `The data key file ${path}`);
}

const missing = () =>
  new DomainError(
    'data_key_missing',
    'unavailable',
    'This call names secret arguments to mask, but no data key is configured: set TOLLGATE_DATA_KEY or TOLLGATE_DATA_KEY_FILE (openssl rand -base64 32)',
  );
const unreadable = () =>
  new DomainError(
    'sealed_arguments_unreadable',
    'unavailable',
    'The secret arguments of this call cannot be opened with the configured data keys (was the key rotated without keeping the old one?)',
  );

const aad = (tenant: string, conversationId: string) => Buffer.from(`${tenant}\u0000${conversationId}`, 'utf8');

/** Masks and seals secret arguments with the data key (see ports/argument-vault.port). */
@Injectable()
export class DataKeyVault implements ArgumentVault {
  private readonly keys: DataKey[];

  constructor(@Inject(TOLLGATE_CONFIG) config: TollgateConfig) {
    this.keys = loadDataKeys(config).map(derive);
  }

  /** The id of the key that seals, when there is one (for the start banner and tests). */
  get activeKeyId(): string | undefined {
    return this.keys[0]?.kid;
  }

  digest(value: unknown, tenant: string): string {
    const key = this.keys[0];
    if (!key) throw missing();
    // A key per tenant: the same secret shows different markers in two tenants.
    const tenantKey = createHmac('sha256', key.digest).update(`tenant:${tenant}`).digest();
    return createHmac('sha256', tenantKey)
      .update(canonicalize(value) ?? 'null')
      .digest('hex')
      .slice(0, 12);
  }

  seal(value: SealedArguments, tenant: string, conversationId: string): string {
    const key = this.keys[0];
    if (!key) throw missing();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key.seal, iv);
    cipher.setAAD(aad(tenant, conversationId));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    const b = (x: Buffer) => x.toString('base64url');
    return [FORMAT, key.kid, b(iv), b(body), b(cipher.getAuthTag())].join('.');
  }

  unseal(sealed: string, tenant: string, conversationId: string): SealedArguments {
    const [format, kid, iv, body, tag] = sealed.split('.');
    const key = this.keys.find((k) => k.kid === kid);
    if (format !== FORMAT || !key || !iv || !body || !tag) throw this.keys.length ? unreadable() : missing();
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.seal, Buffer.from(iv, 'base64url'));
      decipher.setAAD(aad(tenant, conversationId));
      const authTag = Buffer.from(tag, 'base64url');
      if (authTag.length !== 16) throw unreadable(); // a shortened tag would be easier to forge
      decipher.setAuthTag(authTag);
      const text = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
      return JSON.parse(text) as SealedArguments;
    } catch {
      throw unreadable();
    }
  }
}
