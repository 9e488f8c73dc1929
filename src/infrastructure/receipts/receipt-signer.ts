import { Inject, Injectable, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import {
  calculateJwkThumbprint,
  compactVerify,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  JWK,
  SignJWT,
} from 'jose';
import { createPrivateKey, createPublicKey, JsonWebKey as NodeJsonWebKey, KeyObject, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { RECEIPT_LIFETIME_SECONDS, ReceiptClaims, ReceiptIdentity, ReceiptSigner } from '../../application/ports';
import {
  CHECKPOINT_TYP,
  CheckpointSignatures,
  OpenedCheckpoint,
} from '../../application/ports/checkpoint-signatures.port';
import { ConfigError, TOLLGATE_CONFIG, TollgateConfig } from '../config/config';
import { digestJson } from '../persistence/event-store';
import { JsonObject, SigningKeyRow } from '../persistence/orm-entities';

const ALG = 'EdDSA';
/** A compact JWS: three base64url parts. Anything longer than this is not one of ours. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

interface ActiveKey {
  kid: string;
  privateKey: CryptoKey | Uint8Array;
  publicJwk: JWK;
}

/**
 * Signs execution receipts and audit checkpoints with one Ed25519 key, and verifies checkpoints.
 *
 * The key comes from TOLLGATE_SIGNING_KEY or TOLLGATE_SIGNING_KEY_FILE (PKCS#8 PEM or a private JWK) when
 * one is set: then it never touches the database, JWKS publishes it alone (kid = its RFC 7638 thumbprint, the
 * same on every instance), and a key that is not Ed25519 stops the start with a ConfigError (startServer reads it before the database opens). Otherwise the key
 * is kept in the database, made on first use, so every instance signs with the same one (a database reader can
 * read it too: see docs/COMPLIANCE.md).
 */
@Injectable()
export class JoseReceiptSigner implements ReceiptSigner, CheckpointSignatures {
  private key?: Promise<ActiveKey>;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
    @Optional() private readonly http?: HttpAdapterHost,
  ) {}

  digest(value: unknown): string {
    return digestJson(value);
  }

  async sign(claims: ReceiptClaims, identity?: ReceiptIdentity): Promise<string> {
    const { kid, privateKey } = await this.signingKey();
    const iat = Math.floor((identity?.issuedAt.getTime() ?? Date.now()) / 1000);
    return new SignJWT({ ...claims })
      .setProtectedHeader({ alg: ALG, kid, typ: 'tollgate-receipt+jwt' })
      .setIssuer('tollgate')
      .setAudience(this.audience())
      .setIssuedAt(iat)
      .setExpirationTime(iat + RECEIPT_LIFETIME_SECONDS)
      .setJti(identity?.jti ?? randomUUID())
      .sign(privateKey);
  }

  /**
   * Whom receipts are for: TOLLGATE_RECEIPT_AUDIENCE, else TOLLGATE_PUBLIC_URL, else the URL this instance
   * listens on (read from the listening server, so a free port chosen at start is the one named). Never the
   * request's Host: the agent that asks for the receipt must not choose whom it is for.
   */
  audience(): string {
    const configured = this.config.receiptAudience ?? this.config.publicUrl;
    if (configured) return configured;
    const address: unknown = this.http?.httpAdapter?.getHttpServer()?.address();
    const port =
      address && typeof address === 'object' && 'port' in address
        ? (address as { port: number }).port
        : this.config.port;
    return `http://${this.config.host.includes(':') ? `[${this.config.host}]` : this.config.host}:${port}`;
  }

  /** Signs any payload (audit checkpoints) with the receipt key. */
  async signPayload(payload: Record<string, unknown>, typ: string): Promise<string> {
    const { kid, privateKey } = await this.signingKey();
    return new SignJWT(payload).setProtectedHeader({ alg: ALG, kid, typ }).setIssuedAt().sign(privateKey);
  }

  /**
   * The keys a receipt may be signed with. A configured key is published alone: a key that once sat in the
   * database (and in its backups) in plain text must not keep minting receipts tool backends accept, and a
   * receipt lives 15 minutes, so none signed with it is still valid after a restart with the new key.
   */
  async jwks(): Promise<{ keys: Record<string, unknown>[] }> {
    const active = await this.signingKey();
    if (this.configured()) return { keys: [publicKey(active.kid, active.publicJwk)] };
    const rows = await this.dataSource.getRepository(SigningKeyRow).find({ order: { createdAt: 'ASC' } });
    return { keys: rows.map((r) => publicKey(r.kid, r.publicJwk as JWK)) };
  }

  /**
   * Verifies a checkpoint with the active key or, for checkpoints signed before a key was configured, with the
   * public part of a database key (read only; never published). A key an attacker adds to the database gains
   * nothing here: the checkpoint to check is the auditor's own copy, and `tollgate audit verify --jwks` checks
   * it against keys pinned outside the database as well.
   */
  async open(jws: string): Promise<OpenedCheckpoint> {
    if (jws.length > 4096 || !COMPACT_JWS.test(jws))
      return { status: 'malformed', reason: 'is not a compact JWS (header.payload.signature)' };
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(jws);
    } catch {
      return { status: 'malformed', reason: 'has no readable JWS header' };
    }
    if (header.typ !== CHECKPOINT_TYP)
      return { status: 'malformed', reason: `is not an audit checkpoint (typ ${JSON.stringify(header.typ ?? null)})` };
    if (header.alg !== ALG || typeof header.kid !== 'string')
      return { status: 'unverified', kid: typeof header.kid === 'string' ? header.kid : undefined };
    const jwk = await this.verificationKey(header.kid);
    if (!jwk) return { status: 'unverified', kid: header.kid };
    try {
      const { payload } = await compactVerify(jws, await importJWK(jwk, ALG), { algorithms: [ALG] });
      const claims: unknown = JSON.parse(new TextDecoder().decode(payload));
      if (!claims || typeof claims !== 'object' || Array.isArray(claims))
        return { status: 'malformed', reason: 'carries no JSON object' };
      return { status: 'verified', kid: header.kid, payload: claims as Record<string, unknown> };
    } catch {
      return { status: 'unverified', kid: header.kid };
    }
  }

  /**
   * Verifies a compact JWS of `typ` that grants power now (an action token): signed with the **active** key only —
   * never a key read from the database by the token's kid, which an old backup's private key or a row someone
   * inserted would otherwise let anyone forge — and the type checked first, so no receipt, checkpoint or other token
   * of ours passes for another kind. The payload when the signature holds, else undefined; nothing is looked up.
   */
  async verifyPayload(jws: string, typ: string): Promise<Record<string, unknown> | undefined> {
    if (jws.length > 4096 || !COMPACT_JWS.test(jws)) return undefined;
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(jws);
    } catch {
      return undefined;
    }
    if (header.typ !== typ || header.alg !== ALG || typeof header.kid !== 'string') return undefined;
    const active = await this.signingKey();
    if (header.kid !== active.kid) return undefined;
    try {
      const { payload } = await compactVerify(jws, await importJWK(active.publicJwk, ALG), { algorithms: [ALG] });
      const claims: unknown = JSON.parse(new TextDecoder().decode(payload));
      return claims && typeof claims === 'object' && !Array.isArray(claims)
        ? (claims as Record<string, unknown>)
        : undefined;
    } catch {
      return undefined;
    }
  }

  private async verificationKey(kid: string): Promise<JWK | undefined> {
    const active = await this.signingKey();
    if (active.kid === kid) return active.publicJwk;
    const row = await this.dataSource
      .getRepository(SigningKeyRow)
      .findOne({ where: { kid }, select: { kid: true, alg: true, publicJwk: true } });
    return row && row.alg === ALG ? (row.publicJwk as JWK) : undefined;
  }

  private configured(): boolean {
    return !!(this.config.signingKey || this.config.signingKeyFile);
  }

  private signingKey() {
    this.key ??= (this.configured() ? configuredKey(this.config) : this.loadOrCreate()).catch((e) => {
      this.key = undefined; // a database hiccup must not poison the cache
      throw e;
    });
    return this.key;
  }

  private async loadOrCreate(): Promise<ActiveKey> {
    const repo = this.dataSource.getRepository(SigningKeyRow);
    let row = await repo.findOne({ where: { alg: ALG }, order: { createdAt: 'DESC' } });
    if (!row) {
      const { privateKey, publicKey } = await generateKeyPair(ALG, { crv: 'Ed25519', extractable: true });
      const kid = randomUUID();
      await repo
        .createQueryBuilder()
        .insert()
        .values({
          kid,
          alg: ALG,
          privateJwk: (await exportJWK(privateKey)) as JsonObject,
          publicJwk: (await exportJWK(publicKey)) as JsonObject,
          createdAt: new Date(),
        })
        .orIgnore()
        .execute();
      // Two instances may race to create one: everyone uses the oldest.
      row = (await repo.findOne({ where: { alg: ALG }, order: { createdAt: 'ASC' } }))!;
    }
    return { kid: row.kid, privateKey: await importJWK(row.privateJwk as JWK, ALG), publicJwk: row.publicJwk as JWK };
  }
}

function publicKey(kid: string, jwk: JWK): Record<string, unknown> {
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, kid, alg: ALG, use: 'sig' };
}

/** The key of TOLLGATE_SIGNING_KEY or TOLLGATE_SIGNING_KEY_FILE; anything but an Ed25519 private key is a ConfigError. */
export async function configuredKey(config: Pick<TollgateConfig, 'signingKey' | 'signingKeyFile'>): Promise<ActiveKey> {
  if (config.signingKey && config.signingKeyFile)
    throw new ConfigError('Set either TOLLGATE_SIGNING_KEY or TOLLGATE_SIGNING_KEY_FILE, not both');
  const source = config.signingKeyFile
    ? `TOLLGATE_SIGNING_KEY_FILE (${config.signingKeyFile})`
    : 'TOLLGATE_SIGNING_KEY';
  let text = config.signingKey ?? '';
  if (config.signingKeyFile) {
    try {
      text = readFileSync(config.signingKeyFile, 'utf8');
    } catch (e) {
      throw new ConfigError(`${source} cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }
  text = text.trim();
  // A PEM put in one environment line often arrives with literal \n.
  if (text.startsWith('-----BEGIN') && !text.includes('\n')) text = text.replace(/\\n/g, '\n');
  let key: KeyObject;
  try {
    key = text.startsWith('{')
      ? createPrivateKey({ key: JSON.parse(text) as NodeJsonWebKey, format: 'jwk' })
      : createPrivateKey(text);
  } catch {
    // The parser's message is not repeated: it could quote part of the key.
    throw new ConfigError(
      `${source} is not a private key: give an Ed25519 key as PKCS#8 PEM (openssl genpkey -algorithm ed25519) or as a private JWK`,
    );
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new ConfigError(
      `${source} is not an Ed25519 key (it is ${key.asymmetricKeyType ?? 'unknown'}): receipts and checkpoints are signed with Ed25519 (EdDSA) only (openssl genpkey -algorithm ed25519)`,
    );
  }
  const publicJwk = createPublicKey(key).export({ format: 'jwk' }) as JWK;
  const privateJwk = key.export({ format: 'jwk' }) as JWK;
  return { kid: await calculateJwkThumbprint(publicJwk), privateKey: await importJWK(privateJwk, ALG), publicJwk };
}
