import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { argumentsDigest } from './jcs.js';
import type { JsonObject } from './types.js';

export const RECEIPT_TYP = 'tollgate-receipt+jwt';

/** What a receipt vouches for (docs/API.md "Receipts"). */
export interface ReceiptClaims {
  /** The tool call's id (`tc_…`). */
  tcid: string;
  /** The conversation's id. */
  conv: string;
  tool: string;
  /** SHA-256, hex, of the JCS arguments to run. */
  args: string;
  /** The `sub` of the person who approved, or `policy`. */
  approvedBy: string;
  iss: string;
  iat: number;
  exp: number;
  jti: string;
}

export interface VerifyReceiptOptions {
  /** Where the server publishes its keys: `<tollgate>/.well-known/jwks.json`. Fetched once and cached per URL. */
  jwksUrl?: string | URL;
  /** Instead of `jwksUrl`: the key set itself (a saved JWKS document, or a jose key-set function). */
  jwks?: JSONWebKeySet | JWTVerifyGetKey;
  /** The tool the backend is about to run. */
  toolName: string;
  /** The arguments the backend is about to run: their digest must be the receipt's `args`. */
  arguments: JsonObject;
  /** When given, the receipt must be for this tool call. */
  toolCallId?: string;
  /** Default `tollgate`. */
  issuer?: string;
  /** Seconds of clock skew allowed on `exp` and `iat`. Default 30. */
  clockTolerance?: number;
}

export type ReceiptErrorCode = 'receipt_invalid' | 'receipt_expired' | 'receipt_mismatch';

/** A receipt that does not vouch for this run: badly signed or formed, expired, or for another call. */
export class ReceiptVerificationError extends Error {
  override readonly name: string = 'ReceiptVerificationError';
  constructor(readonly code: ReceiptErrorCode, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
  }
}

const remoteKeySets = new Map<string, JWTVerifyGetKey>();

function keySet(o: VerifyReceiptOptions): JWTVerifyGetKey {
  if (o.jwks) return typeof o.jwks === 'function' ? o.jwks : createLocalJWKSet(o.jwks);
  if (!o.jwksUrl) throw new TypeError('verifyReceipt needs jwksUrl or jwks');
  const url = new URL(o.jwksUrl).toString();
  let set = remoteKeySets.get(url);
  if (!set) {
    set = createRemoteJWKSet(new URL(url)); // jose caches the keys and refetches for an unknown kid
    remoteKeySets.set(url, set);
  }
  return set;
}

/**
 * Resolves to the receipt's claims when Tollgate approved running `toolName` with exactly `arguments`: an
 * EdDSA signature by a key of the JWKS, `typ` tollgate-receipt+jwt, the issuer, not expired, the tool, and
 * `args` = sha256(JCS(arguments)). Throws ReceiptVerificationError otherwise. To run each approval once,
 * remember `tcid` (or `jti`) until `exp` and refuse a receipt seen before.
 */
export async function verifyReceipt(receipt: string, o: VerifyReceiptOptions): Promise<ReceiptClaims> {
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(receipt, keySet(o), {
      algorithms: ['EdDSA'],
      issuer: o.issuer ?? 'tollgate',
      typ: RECEIPT_TYP,
      clockTolerance: o.clockTolerance ?? 30,
      requiredClaims: ['tcid', 'conv', 'tool', 'args', 'approvedBy', 'iat', 'exp', 'jti'],
    }));
  } catch (e) {
    if (e instanceof errors.JWTExpired) throw new ReceiptVerificationError('receipt_expired', 'the receipt has expired', e);
    if (e instanceof TypeError) throw e;
    throw new ReceiptVerificationError('receipt_invalid', `the receipt does not verify: ${(e as Error).message}`, e);
  }
  const claims = payload as unknown as ReceiptClaims;
  if (claims.tool !== o.toolName) throw new ReceiptVerificationError('receipt_mismatch', `the receipt approves ${JSON.stringify(claims.tool)}, not ${JSON.stringify(o.toolName)}`);
  if (o.toolCallId !== undefined && claims.tcid !== o.toolCallId) throw new ReceiptVerificationError('receipt_mismatch', `the receipt is for tool call ${claims.tcid}, not ${o.toolCallId}`);
  if (claims.args !== (await argumentsDigest(o.arguments))) throw new ReceiptVerificationError('receipt_mismatch', 'the receipt approves other arguments');
  return claims;
}
