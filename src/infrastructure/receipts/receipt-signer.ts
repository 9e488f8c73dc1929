import { Injectable } from '@nestjs/common';
import canonicalize from 'canonicalize';
import { exportJWK, generateKeyPair, importJWK, JWK, SignJWT } from 'jose';
import { createHash, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ReceiptClaims, ReceiptSigner } from '../../application/ports';
import { JsonObject, SigningKeyRow } from '../persistence/orm-entities';

const ALG = 'EdDSA';
const RECEIPT_TTL = '15m';

/**
 * Signs execution receipts and audit checkpoints with an Ed25519 key kept in the database,
 * so every instance signs with the same key and JWKS shows it. Made on first use.
 */
@Injectable()
export class JoseReceiptSigner implements ReceiptSigner {
  private key?: Promise<{ kid: string; privateKey: CryptoKey | Uint8Array; publicJwk: JWK }>;

  constructor(private readonly dataSource: DataSource) {}

  digest(value: unknown): string {
    return createHash('sha256').update(canonicalize(value) ?? 'null').digest('hex');
  }

  async sign(claims: ReceiptClaims): Promise<string> {
    const { kid, privateKey } = await this.signingKey();
    return new SignJWT({ ...claims })
      .setProtectedHeader({ alg: ALG, kid, typ: 'tollgate-receipt+jwt' })
      .setIssuer('tollgate')
      .setIssuedAt()
      .setExpirationTime(RECEIPT_TTL)
      .setJti(randomUUID())
      .sign(privateKey);
  }

  /** Signs any payload (audit checkpoints) with the receipt key. */
  async signPayload(payload: Record<string, unknown>, typ: string): Promise<string> {
    const { kid, privateKey } = await this.signingKey();
    return new SignJWT(payload).setProtectedHeader({ alg: ALG, kid, typ }).setIssuedAt().sign(privateKey);
  }

  async jwks(): Promise<{ keys: Record<string, unknown>[] }> {
    await this.signingKey();
    const rows = await this.dataSource.getRepository(SigningKeyRow).find({ order: { createdAt: 'ASC' } });
    return { keys: rows.map((r) => ({ ...r.publicJwk, kid: r.kid, alg: r.alg, use: 'sig' })) };
  }

  private signingKey() {
    this.key ??= this.loadOrCreate().catch((e) => {
      this.key = undefined; // a database hiccup must not poison the cache
      throw e;
    });
    return this.key;
  }

  private async loadOrCreate() {
    const repo = this.dataSource.getRepository(SigningKeyRow);
    let row = await repo.findOne({ where: { alg: ALG }, order: { createdAt: 'DESC' } });
    if (!row) {
      const { privateKey, publicKey } = await generateKeyPair(ALG, { crv: 'Ed25519', extractable: true });
      const kid = randomUUID();
      await repo
        .createQueryBuilder()
        .insert()
        .values({ kid, alg: ALG, privateJwk: (await exportJWK(privateKey)) as JsonObject, publicJwk: (await exportJWK(publicKey)) as JsonObject, createdAt: new Date() })
        .orIgnore()
        .execute();
      // Two instances may race to create one: everyone uses the oldest.
      row = (await repo.findOne({ where: { alg: ALG }, order: { createdAt: 'ASC' } }))!;
    }
    return { kid: row.kid, privateKey: await importJWK(row.privateJwk as JWK, ALG), publicJwk: row.publicJwk as JWK };
  }
}
