import {
  base64url,
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
} from 'jose';
import { argumentsDigest } from './jcs.js';
import { previewDigest } from './preview.js';
import type { JsonObject, PreviewInput } from './types.js';

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
  /** The tenant of the call (`default` for tokens without a `tenant` claim). */
  tenant: string;
  /** Who the receipt is for: the server's TOLLGATE_RECEIPT_AUDIENCE, else its TOLLGATE_PUBLIC_URL, else its URL. */
  aud: string;
  iss: string;
  iat: number;
  exp: number;
  jti: string;
  /**
   * Only when an approval was made with a passkey (the call's rule says `stepUp: passkey`): one entry per such
   * approval, each of a quorum's. The whole assertion is in the approval's audit event.
   */
  stepUp?: ReceiptStepUp[];
  /** Only when the proposal carried a preview: its digest (SHA-256, base64url, of its RFC 8785 form). */
  preview?: string;
}

/** A passkey an approval of the call was made with, user verification included. */
export interface ReceiptStepUp {
  /** The `sub` of the person who approved with it. */
  by: string;
  method: 'passkey';
  /** The passkey's credential id (base64url). */
  credentialId: string;
  /** The authenticator model's AAGUID (all zeros when it does not say). */
  aaguid: string;
  uv: true;
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
  /**
   * The tenant whose approvals this backend acts on (the `tenant` claim of its agents' tokens; `default` when they
   * carry none). Required: one key signs every tenant's receipts, so without it another tenant's admin could
   * approve what runs here.
   */
  tenant: string;
  /** When given, the receipt's `aud` must be it (the server's TOLLGATE_RECEIPT_AUDIENCE or TOLLGATE_PUBLIC_URL). */
  audience?: string;
  /**
   * When given, the receipt must be for this tool call. A backend that runs one given call (not any call of this
   * tool) should pass it: a receipt for another call of the same tool with the same arguments would pass otherwise.
   */
  toolCallId?: string;
  /**
   * When true, the receipt must carry a `stepUp` claim: the call was approved with a person's passkey (its rule
   * says `stepUp: passkey`). A backend whose tool must never run on a plain approval passes it, so that a policy
   * edited to drop the passkey does not go unnoticed here. Without one, `receipt_mismatch`.
   */
  requireStepUp?: boolean;
  /**
   * The preview of what the backend is about to do (a diff, the SQL, the email…), as the agent proposed it: the
   * receipt's `preview` must be its digest. Refused (`receipt_mismatch`) when they differ, or when the receipt has
   * none (the people who approved saw no preview). Left out: the receipt's preview, if any, is not checked.
   */
  preview?: PreviewInput;
  /** Refuses a receipt whose `jti` was seen before (`receipt_replayed`): pass one store for the backend's life. */
  replayStore?: ReceiptReplayStore;
  /** Default `tollgate`. */
  issuer?: string;
  /** Seconds of clock skew allowed on `exp` and `iat`. Default 30. */
  clockTolerance?: number;
}

export type ReceiptErrorCode = 'receipt_invalid' | 'receipt_expired' | 'receipt_mismatch' | 'receipt_replayed';

/** Where verifyReceipt remembers receipts it accepted, to refuse them a second time. */
export interface ReceiptReplayStore {
  /**
   * Records `jti` until `expiresAt` (seconds since the epoch; the receipt is refused as expired after it anyway)
   * and answers whether it was recorded before. Atomic per `jti` (a shared store: Redis `SET NX EX`, a unique row).
   * An error it throws fails the verification.
   */
  seen(jti: string, expiresAt: number): boolean | Promise<boolean>;
}

/**
 * A ReceiptReplayStore in this process's memory, for a backend that runs as one process. It holds at most
 * `maxEntries` receipts (default 100,000) that have not expired; past that it throws rather than forget one that
 * could then be replayed.
 */
export class MemoryReplayStore implements ReceiptReplayStore {
  private readonly entries = new Map<string, number>();
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(o: { maxEntries?: number; now?: () => number } = {}) {
    this.maxEntries = o.maxEntries ?? 100_000;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1)
      throw new RangeError('maxEntries must be a whole number above 0');
    this.now = o.now ?? (() => Date.now() / 1000);
  }

  seen(jti: string, expiresAt: number): boolean {
    const now = this.now();
    const known = this.entries.get(jti);
    if (known !== undefined && known >= now) return true;
    if (known === undefined && this.entries.size >= this.maxEntries) {
      for (const [k, until] of this.entries) if (until < now) this.entries.delete(k);
      if (this.entries.size >= this.maxEntries)
        throw new RangeError(
          `MemoryReplayStore holds ${this.maxEntries} unexpired receipts; give it a larger maxEntries`,
        );
    }
    this.entries.set(jti, expiresAt);
    return false;
  }
}

/** A receipt that does not vouch for this run: badly signed or formed, expired, for another call, or used before. */
export class ReceiptVerificationError extends Error {
  override readonly name: string = 'ReceiptVerificationError';
  constructor(
    readonly code: ReceiptErrorCode,
    message: string,
    cause?: unknown,
  ) {
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
    // jose caches the keys and refetches for an unknown kid, at most once per 30 s (its cooldownDuration).
    set = createRemoteJWKSet(new URL(url));
    remoteKeySets.set(url, set);
  }
  return set;
}

/**
 * Three base64url parts, each the one encoding of its bytes: decoders ignore a last character's unused bits, so
 * without this check one receipt could be written several ways (and pass a check that compares tokens).
 */
function isCanonicalCompact(token: unknown): boolean {
  if (
    typeof token !== 'string' ||
    token.length > 16_384 ||
    !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)
  )
    return false;
  try {
    return token.split('.').every((part) => base64url.encode(base64url.decode(part)) === part);
  } catch {
    return false;
  }
}

/** A non-empty array of well-formed passkey entries: a receipt signed by Tollgate has nothing else there. */
function hasStepUp(claim: unknown): boolean {
  return (
    Array.isArray(claim) &&
    claim.length > 0 &&
    claim.every(
      (e: Partial<ReceiptStepUp> | null) =>
        typeof e === 'object' &&
        e !== null &&
        e.method === 'passkey' &&
        e.uv === true &&
        typeof e.by === 'string' &&
        e.by !== '' &&
        typeof e.credentialId === 'string' &&
        e.credentialId !== '',
    )
  );
}

const TEXT_CLAIMS = ['tcid', 'conv', 'tool', 'args', 'approvedBy', 'tenant', 'jti'] as const;

/**
 * Resolves to the receipt's claims when Tollgate approved running `toolName` with exactly `arguments` in `tenant`:
 * an EdDSA signature by a key of the JWKS, `typ` tollgate-receipt+jwt, the issuer, not expired, the tenant, the
 * audience (when given), the tool, the call (when given), `args` = sha256(JCS(arguments)), a passkey's approval
 * (with `requireStepUp`), the preview's digest (with `preview`), and a `jti` not seen before (with a `replayStore`). Throws ReceiptVerificationError otherwise, and TypeError without a `tenant`.
 */
export async function verifyReceipt(receipt: string, o: VerifyReceiptOptions): Promise<ReceiptClaims> {
  if (typeof o?.tenant !== 'string' || o.tenant === '') {
    throw new TypeError(
      "verifyReceipt needs tenant: the tenant whose approvals this backend acts on (its agents' token claim `tenant`, `default` when they carry none)",
    );
  }
  if (o.audience !== undefined && (typeof o.audience !== 'string' || o.audience === ''))
    throw new TypeError('verifyReceipt: audience must be a non-empty string');
  if (!isCanonicalCompact(receipt))
    throw new ReceiptVerificationError('receipt_invalid', 'the receipt is not a compact JWS in canonical base64url');
  const clockTolerance = o.clockTolerance ?? 30;
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(receipt, keySet(o), {
      algorithms: ['EdDSA'],
      issuer: o.issuer ?? 'tollgate',
      typ: RECEIPT_TYP,
      clockTolerance,
      requiredClaims: ['tcid', 'conv', 'tool', 'args', 'approvedBy', 'tenant', 'iat', 'exp', 'jti'],
    }));
  } catch (e) {
    if (e instanceof errors.JWTExpired)
      throw new ReceiptVerificationError('receipt_expired', 'the receipt has expired', e);
    if (e instanceof TypeError) throw e;
    throw new ReceiptVerificationError('receipt_invalid', `the receipt does not verify: ${(e as Error).message}`, e);
  }
  const bad = TEXT_CLAIMS.find((c) => typeof payload[c] !== 'string' || payload[c] === '');
  if (bad) throw new ReceiptVerificationError('receipt_invalid', `the receipt's ${bad} is not a non-empty string`);
  const claims = payload as unknown as ReceiptClaims;
  const mismatch = (message: string) => new ReceiptVerificationError('receipt_mismatch', message);
  if (claims.tenant !== o.tenant)
    throw mismatch(`the receipt is for tenant ${JSON.stringify(claims.tenant)}, not ${JSON.stringify(o.tenant)}`);
  const aud: unknown = payload.aud;
  if (o.audience !== undefined && aud !== o.audience && !(Array.isArray(aud) && aud.includes(o.audience))) {
    throw mismatch(`the receipt is for audience ${JSON.stringify(aud ?? null)}, not ${JSON.stringify(o.audience)}`);
  }
  if (claims.tool !== o.toolName)
    throw mismatch(`the receipt approves ${JSON.stringify(claims.tool)}, not ${JSON.stringify(o.toolName)}`);
  if (o.toolCallId !== undefined && claims.tcid !== o.toolCallId)
    throw mismatch(`the receipt is for tool call ${claims.tcid}, not ${o.toolCallId}`);
  let digest: string;
  try {
    digest = await argumentsDigest(o.arguments);
  } catch (e) {
    // A lone surrogate, a non-finite number, a cycle: nothing Tollgate could have approved.
    throw new ReceiptVerificationError(
      'receipt_mismatch',
      `the arguments are not JSON Tollgate could have approved: ${(e as Error).message}`,
      e,
    );
  }
  if (claims.args !== digest) throw mismatch('the receipt approves other arguments');
  if (o.requireStepUp && !hasStepUp(payload.stepUp))
    throw mismatch('the receipt has no stepUp: the call was not approved with a passkey');
  if (o.preview !== undefined) {
    if (typeof payload.preview !== 'string' || payload.preview === '')
      throw mismatch('the receipt has no preview: the people who approved were shown none');
    let shown: string;
    try {
      shown = await previewDigest(o.preview);
    } catch (e) {
      throw new ReceiptVerificationError(
        'receipt_mismatch',
        `the preview is not JSON Tollgate could have shown: ${(e as Error).message}`,
        e,
      );
    }
    if (payload.preview !== shown) throw mismatch('the receipt approves another preview than the one given');
  }
  // Last, so that a receipt refused above is not spent.
  if (o.replayStore && (await o.replayStore.seen(claims.jti, claims.exp + clockTolerance))) {
    throw new ReceiptVerificationError('receipt_replayed', `the receipt was used before (jti ${claims.jti})`);
  }
  return claims;
}
