import { Inject, Injectable } from '@nestjs/common';
import { createECDH, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { generateVAPIDKeys } from 'web-push';
import { ConfigError, TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';

/** An application server's VAPID key pair (RFC 8292), base64url: a P-256 public point and its private scalar. */
export interface VapidKeyPair {
  /** 65 bytes, uncompressed: what a browser's `pushManager.subscribe({applicationServerKey})` takes. */
  publicKey: string;
  /** 32 bytes. Never logged, never answered. */
  privateKey: string;
}

/**
 * The key pair that signs every push request. The operator's (TOLLGATE_VAPID_PUBLIC_KEY and _PRIVATE_KEY), else one
 * kept in `vapid_keys`, made on first use, as the signing key is (receipt-signer.ts). A subscription is bound to the
 * public key it was made with: a new pair silently orphans every browser's subscription, so the pair stays as it is.
 */
@Injectable()
export class VapidKeys {
  private pair?: Promise<VapidKeyPair>;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
  ) {
    const { publicKey, privateKey } = config.push;
    // Checked at start, so a pasted half of a key stops the server rather than every send.
    if (publicKey && privateKey) checkPair({ publicKey, privateKey });
  }

  get(): Promise<VapidKeyPair> {
    const { publicKey, privateKey } = this.config.push;
    if (publicKey && privateKey) return Promise.resolve({ publicKey, privateKey });
    this.pair ??= this.loadOrCreate().catch((e) => {
      this.pair = undefined; // a database hiccup must not poison the cache
      throw e;
    });
    return this.pair;
  }

  private async loadOrCreate(): Promise<VapidKeyPair> {
    const oldest = async () => {
      const [row]: Array<{ public_key: string; private_key: string }> = await this.dataSource.query(
        `SELECT public_key, private_key FROM vapid_keys ORDER BY created_at, id LIMIT 1`,
      );
      return row ? { publicKey: row.public_key, privateKey: row.private_key } : undefined;
    };
    const found = await oldest();
    if (found) return found;
    const made = generateVAPIDKeys();
    await this.dataSource.query(
      `INSERT INTO vapid_keys (id, public_key, private_key, created_at) VALUES ($1, $2, $3, now())`,
      [randomUUID(), made.publicKey, made.privateKey],
    );
    // Two instances may race to make one: everyone uses the oldest.
    return (await oldest())!;
  }
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** A ConfigError unless the two keys are base64url P-256 keys of one pair (the message never quotes them). */
export function checkPair(pair: VapidKeyPair): void {
  const pub = BASE64URL.test(pair.publicKey) ? Buffer.from(pair.publicKey, 'base64url') : Buffer.alloc(0);
  const priv = BASE64URL.test(pair.privateKey) ? Buffer.from(pair.privateKey, 'base64url') : Buffer.alloc(0);
  if (pub.length !== 65 || pub[0] !== 4)
    throw new ConfigError(
      'TOLLGATE_VAPID_PUBLIC_KEY must be an uncompressed P-256 public key in base64url (65 bytes), as `npx web-push generate-vapid-keys` prints',
    );
  if (priv.length !== 32)
    throw new ConfigError(
      'TOLLGATE_VAPID_PRIVATE_KEY must be a P-256 private key in base64url (32 bytes), as `npx web-push generate-vapid-keys` prints',
    );
  let derived: Buffer;
  try {
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(priv);
    derived = ecdh.getPublicKey();
  } catch {
    throw new ConfigError('TOLLGATE_VAPID_PRIVATE_KEY is not a valid P-256 private key');
  }
  if (!derived.equals(pub))
    throw new ConfigError('TOLLGATE_VAPID_PUBLIC_KEY is not the public key of TOLLGATE_VAPID_PRIVATE_KEY');
}
