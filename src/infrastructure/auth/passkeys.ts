import { Inject, Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import canonicalize from 'canonicalize';
import { createHash, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type {
  AssertionOptions,
  Passkeys,
  PasskeySummary,
  RegisteredPasskey,
  WebAuthnJson,
} from '../../application/ports/passkey.port';
import type { StepUpEvidence } from '../../domain/conversation/step-up-proof';
import {
  PasskeyAssertionRequiredError,
  PasskeyInvalidError,
  PasskeyNotFoundError,
  TooManyPasskeysError,
} from '../../domain/person/passkey.errors';
import type { PasskeyChange } from '../../application/ports/passkey.port';
import { enrolmentRefusal, OwnAssertion, removalRefusal } from '../../domain/person/rules/passkey-enrolment';
import type { Principal } from '../../domain/shared/actor';
import { TOLLGATE_CONFIG, TollgateConfig } from '../config/config';
import { TypeOrmUnitOfWork } from '../persistence/unit-of-work';
import { digestJson } from '../persistence/event-store';

/** A challenge lives five minutes (the options' timeout too), and answers once. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** Challenges one person may have outstanding; issuing more forgets the oldest. */
const OUTSTANDING_CHALLENGES = 20;
/** The step-up challenge's version tag (docs/AUTH.md). */
export const STEP_UP_VERSION = 'tollgate-step-up/1';

/*
 * Bounds on what a browser sends, checked before the library sees it (base64url characters). A credential id
 * is at most 1023 bytes (WebAuthn), client data a few hundred, authenticator data with extensions a few hundred,
 * an ES256/RS256 signature under 600; an attestation object with a certificate chain a few KiB.
 */
const MAX_ID = 1366;
const MAX_CLIENT_DATA = 8192;
const MAX_AUTHENTICATOR_DATA = 8192;
const MAX_SIGNATURE = 2048;
const MAX_USER_HANDLE = 128;
const MAX_ATTESTATION = 65536;
const MAX_PUBLIC_KEY = 4096;
const MAX_CHALLENGE = 128;
const TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);
const B64URL = /^[A-Za-z0-9_-]*$/;

/** What a challenge may authorise: each change to the passkeys has its own, so one touch serves one change only. */
type ManagePurpose = PasskeyChange;
type Purpose = 'register' | 'step_up' | ManagePurpose;

interface PasskeyRow {
  credential_id: string;
  public_key: string;
  counter: string | number;
  aaguid: string;
  transports: string[];
  backed_up: boolean;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

interface ChallengeRow {
  challenge: string;
  nonce: string;
  tool_call_id: string | null;
  arguments_digest: string | null;
  expires_at: Date;
}

type Parsed<T> = { ok: true; value: T; challenge: string } | { ok: false; reason: string };

/**
 * People's passkeys with @simplewebauthn/server, in hand-written SQL on the unit of work's connection (so a
 * challenge used up and the decision it served commit together). Only public keys are stored.
 */
@Injectable()
export class WebAuthnPasskeys implements Passkeys, OnModuleInit {
  private readonly log = new Logger('Passkeys');

  constructor(
    private readonly uow: TypeOrmUnitOfWork,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
    @Optional() private readonly http?: HttpAdapterHost,
  ) {}

  onModuleInit(): void {
    const warning = relyingPartyWarning(this.config);
    if (warning) this.log.warn(warning);
  }

  /**
   * The relying party: TOLLGATE_PUBLIC_URL's origin and host name; without it (loopback), http://localhost and
   * the port this instance listens on (read from the listening server, as receipts' audience is). WebAuthn
   * refuses IP-address origins, so people open http://localhost:PORT.
   */
  relyingParty(): { origin: string; rpID: string } {
    if (this.config.publicUrl) {
      const url = new URL(this.config.publicUrl);
      return { origin: url.origin, rpID: url.hostname };
    }
    const address: unknown = this.http?.httpAdapter?.getHttpServer()?.address();
    const port =
      address && typeof address === 'object' && 'port' in address
        ? (address as { port: number }).port
        : this.config.port;
    return { origin: `http://localhost:${port}`, rpID: 'localhost' };
  }

  async registrationOptions(p: Principal, at: Date) {
    const held = await this.rows(p);
    const { rpID } = this.relyingParty();
    const challenge = randomBytes(32);
    await this.issue(p, 'register', challenge, at);
    const publicKey = await generateRegistrationOptions({
      rpName: 'Tollgate',
      rpID,
      userName: p.email ?? p.id,
      userDisplayName: p.name ?? p.id,
      // A stable handle per person and tenant that names neither: the authenticator keeps it.
      userID: createHash('sha256').update(`${p.tenant}\u0000${p.id}`).digest(),
      challenge,
      timeout: CHALLENGE_TTL_MS,
      attestationType: 'none',
      excludeCredentials: held.map((r) => ({ id: r.credential_id, transports: r.transports })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    });
    const assertion = held.length > 0 ? await this.manageOptions(p, at, 'add', held) : undefined;
    return { publicKey: publicKey as unknown as WebAuthnJson, ...(assertion ? { assertion } : {}) };
  }

  async register(p: Principal, input: { response: WebAuthnJson; name?: string; assertion?: WebAuthnJson }, at: Date) {
    const held = await this.rows(p);
    const own = input.assertion === undefined ? 'absent' : await this.ownAssertion(p, input.assertion, held, at, 'add');
    const refused = enrolmentRefusal(held.length, own);
    if (refused)
      return {
        ok: false as const,
        error:
          refused.code === 'too_many_passkeys'
            ? new TooManyPasskeysError(refused.reason)
            : new PasskeyAssertionRequiredError(refused.reason),
      };
    const parsed = parseRegistration(input.response);
    if (!parsed.ok) return { ok: false as const, error: new PasskeyInvalidError(`The registration ${parsed.reason}`) };
    const issued = await this.use(p, 'register', parsed.challenge, at);
    if (!issued)
      return {
        ok: false as const,
        error: new PasskeyInvalidError('The registration answers no challenge issued to you, or one used or expired'),
      };
    const { origin, rpID } = this.relyingParty();
    let info;
    try {
      const v = await verifyRegistrationResponse({
        response: parsed.value,
        expectedChallenge: issued.challenge,
        expectedOrigin: origin,
        expectedRPID: rpID,
        requireUserVerification: true,
      });
      if (!v.verified) throw new Error('it did not verify');
      info = v.registrationInfo;
    } catch (e) {
      return { ok: false as const, error: new PasskeyInvalidError(`The registration did not verify: ${why(e)}`) };
    }
    const credentialId = info.credential.id;
    if (held.some((r) => r.credential_id === credentialId))
      return { ok: false as const, error: new PasskeyInvalidError('This passkey is registered already') };
    const name = input.name ?? `Passkey ${held.length + 1}`;
    const publicKey = Buffer.from(info.credential.publicKey).toString('base64url');
    const transports = (info.credential.transports ?? []).filter((t) => TRANSPORTS.has(t));
    const inserted: unknown[] = await this.uow.manager().query(
      `INSERT INTO passkeys (tenant_id, credential_id, person_id, public_key, counter, aaguid, transports,
                             device_type, backed_up, name, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::text[], $8, $9, $10, $11)
       ON CONFLICT (tenant_id, credential_id) DO NOTHING RETURNING credential_id`,
      [
        p.tenant,
        credentialId,
        p.id,
        publicKey,
        info.credential.counter,
        info.aaguid,
        transports,
        info.credentialDeviceType,
        info.credentialBackedUp,
        name,
        at,
      ],
    );
    // Someone else's in this tenant: an authenticator does not hand one credential to two accounts.
    if (inserted.length === 0)
      return { ok: false as const, error: new PasskeyInvalidError('This passkey is registered already') };
    const passkey: RegisteredPasskey = {
      id: credentialId,
      name,
      aaguid: info.aaguid,
      backedUp: info.credentialBackedUp,
      createdAt: at,
      deviceType: info.credentialDeviceType,
      publicKey,
    };
    return { ok: true as const, passkey };
  }

  async list(p: Principal): Promise<PasskeySummary[]> {
    return (await this.rows(p)).map(summary);
  }

  async count(p: Principal): Promise<number> {
    const [r]: Array<{ n: number }> = await this.uow
      .manager()
      .query(`SELECT count(*)::int AS n FROM passkeys WHERE tenant_id = $1 AND person_id = $2`, [p.tenant, p.id]);
    return r?.n ?? 0;
  }

  async manageOptions(
    p: Principal,
    at: Date,
    purpose: ManagePurpose = 'remove',
    held?: PasskeyRow[],
  ): Promise<AssertionOptions> {
    return { publicKey: await this.assertionOptions(p, purpose, randomBytes(32), at, held) };
  }

  async remove(p: Principal, credentialId: string, assertion: WebAuthnJson | undefined, at: Date) {
    const held = await this.rows(p);
    if (!held.some((r) => r.credential_id === credentialId))
      return { ok: false as const, error: new PasskeyNotFoundError() };
    const own = assertion === undefined ? 'absent' : await this.ownAssertion(p, assertion, held, at, 'remove');
    const refused = removalRefusal(own);
    if (refused) return { ok: false as const, error: new PasskeyAssertionRequiredError(refused) };
    await this.uow
      .manager()
      .query(`DELETE FROM passkeys WHERE tenant_id = $1 AND person_id = $2 AND credential_id = $3`, [
        p.tenant,
        p.id,
        credentialId,
      ]);
    return { ok: true as const };
  }

  async revoke(
    admin: Principal,
    personId: string,
    credentialId: string,
    assertion: WebAuthnJson | undefined,
    at: Date,
  ) {
    // The admin's own passkey signs the removal: a stolen admin session alone must not clear a person's passkeys
    // and let the thief enrol the first new one.
    const mine = await this.rows(admin);
    const own = assertion === undefined ? 'absent' : await this.ownAssertion(admin, assertion, mine, at, 'revoke');
    if (own !== 'verified')
      return {
        ok: false as const,
        error: new PasskeyAssertionRequiredError(
          own === 'absent'
            ? "Removing another person's passkey needs an assertion with one of your own passkeys"
            : 'The assertion with your passkey did not verify',
        ),
      };
    if (!(await this.deleteOf(admin.tenant, personId, credentialId)))
      return { ok: false as const, error: new PasskeyNotFoundError(`of ${personId}`) };
    return { ok: true as const };
  }

  private async deleteOf(tenantId: string, personId: string, credentialId: string): Promise<boolean> {
    // TypeORM answers a DELETE on PostgreSQL as [rows, count].
    const [, count]: [unknown[], number] = await this.uow
      .manager()
      .query(`DELETE FROM passkeys WHERE tenant_id = $1 AND person_id = $2 AND credential_id = $3`, [
        tenantId,
        personId,
        credentialId,
      ]);
    return count > 0;
  }

  async stepUpOptions(p: Principal, toolCallId: string, args: Record<string, unknown>, at: Date) {
    const argumentsDigest = digest(args);
    const nonce = randomBytes(16).toString('base64url');
    const challenge = stepUpChallenge({ tenant: p.tenant, toolCallId, argumentsDigest, nonce });
    const publicKey = await this.assertionOptions(p, 'step_up', challenge, at, undefined, {
      nonce,
      toolCallId,
      argumentsDigest,
    });
    return { publicKey, argumentsDigest };
  }

  async verifyStepUp(
    p: Principal,
    response: WebAuthnJson,
    toolCallId: string,
    args: Record<string, unknown>,
    at: Date,
  ): Promise<StepUpEvidence> {
    const parsed = parseAssertion(response);
    if (!parsed.ok) return { outcome: 'invalid', reason: `The passkey assertion ${parsed.reason}` };
    const issued = await this.use(p, 'step_up', parsed.challenge, at);
    if (!issued || !issued.tool_call_id || !issued.arguments_digest)
      return {
        outcome: 'invalid',
        reason: 'The passkey assertion answers no step-up challenge issued to you, or one used or expired',
      };
    const derived = stepUpChallenge({
      tenant: p.tenant,
      toolCallId: issued.tool_call_id,
      argumentsDigest: issued.arguments_digest,
      nonce: issued.nonce,
    });
    if (Buffer.from(derived).toString('base64url') !== issued.challenge)
      return { outcome: 'invalid', reason: 'The step-up challenge is not one Tollgate derived' };
    const checked = await this.verifyWith(p, parsed.value, issued.challenge, at);
    if (!checked.ok) return { outcome: 'invalid', reason: checked.reason };
    if (issued.tool_call_id !== toolCallId)
      return { outcome: 'mismatch', reason: 'The passkey signed for another tool call' };
    if (issued.arguments_digest !== digest(args))
      return { outcome: 'mismatch', reason: 'The passkey signed for other arguments than the ones approved' };
    const r = parsed.value.response;
    return {
      outcome: 'verified',
      arguments: args,
      proof: {
        method: 'passkey',
        credentialId: checked.row.credential_id,
        aaguid: checked.row.aaguid,
        userVerified: true,
        toolCallId: issued.tool_call_id,
        argumentsDigest: issued.arguments_digest,
        nonce: issued.nonce,
        publicKey: checked.row.public_key,
        assertion: {
          clientDataJSON: r.clientDataJSON,
          authenticatorData: r.authenticatorData,
          signature: r.signature,
        },
      },
    };
  }

  // -------------------------------------------------------------------------------------------------------

  private async rows(p: Principal): Promise<PasskeyRow[]> {
    return this.uow.manager().query(
      `SELECT credential_id, public_key, counter, aaguid, transports, backed_up, name, created_at, last_used_at
       FROM passkeys WHERE tenant_id = $1 AND person_id = $2 ORDER BY created_at, credential_id`,
      [p.tenant, p.id],
    );
  }

  private async assertionOptions(
    p: Principal,
    purpose: Purpose,
    challenge: Uint8Array<ArrayBuffer>,
    at: Date,
    held?: PasskeyRow[],
    stepUp?: { nonce: string; toolCallId: string; argumentsDigest: string },
  ): Promise<WebAuthnJson> {
    const mine = held ?? (await this.rows(p));
    const { rpID } = this.relyingParty();
    await this.issue(p, purpose, challenge, at, stepUp);
    const options = await generateAuthenticationOptions({
      rpID,
      challenge,
      timeout: CHALLENGE_TTL_MS,
      userVerification: 'required',
      allowCredentials: mine.map((r) => ({ id: r.credential_id, transports: r.transports })),
    });
    return options as unknown as WebAuthnJson;
  }

  /** Stores a challenge for one person and purpose; their expired ones, and the oldest past the bound, go. */
  private async issue(
    p: Principal,
    purpose: Purpose,
    challenge: Uint8Array,
    at: Date,
    stepUp?: { nonce: string; toolCallId: string; argumentsDigest: string },
  ): Promise<void> {
    const m = this.uow.manager();
    await m.query(
      `DELETE FROM passkey_challenges WHERE tenant_id = $1 AND person_id = $2
         AND (expires_at <= $3 OR challenge IN (
           SELECT challenge FROM passkey_challenges WHERE tenant_id = $1 AND person_id = $2
           ORDER BY expires_at DESC OFFSET ${OUTSTANDING_CHALLENGES - 1}))`,
      [p.tenant, p.id, at],
    );
    const encoded = Buffer.from(challenge).toString('base64url');
    await m.query(
      `INSERT INTO passkey_challenges (tenant_id, challenge, person_id, purpose, nonce, tool_call_id,
                                       arguments_digest, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        p.tenant,
        encoded,
        p.id,
        purpose,
        stepUp?.nonce ?? encoded,
        stepUp?.toolCallId ?? null,
        stepUp?.argumentsDigest ?? null,
        new Date(at.getTime() + CHALLENGE_TTL_MS),
      ],
    );
  }

  /** Uses up a challenge issued to this person for this purpose: deleted whether or not it is still in time. */
  private async use(p: Principal, purpose: Purpose, challenge: string, at: Date): Promise<ChallengeRow | undefined> {
    const res: unknown[] = await this.uow.manager().query(
      `DELETE FROM passkey_challenges WHERE tenant_id = $1 AND challenge = $2 AND person_id = $3 AND purpose = $4
       RETURNING challenge, nonce, tool_call_id, arguments_digest, expires_at`,
      [p.tenant, challenge, p.id, purpose],
    );
    // TypeORM answers a DELETE … RETURNING on PostgreSQL as [rows, count].
    const row = (Array.isArray(res[0]) ? res[0][0] : res[0]) as ChallengeRow | undefined;
    if (!row || new Date(row.expires_at).getTime() <= at.getTime()) return undefined;
    return row;
  }

  /** An assertion with one of the person's own passkeys, for adding or removing one. */
  private async ownAssertion(
    p: Principal,
    json: WebAuthnJson,
    held: PasskeyRow[],
    at: Date,
    purpose: ManagePurpose,
  ): Promise<OwnAssertion> {
    if (held.length === 0) return 'invalid';
    const parsed = parseAssertion(json);
    if (!parsed.ok) return 'invalid';
    const issued = await this.use(p, purpose, parsed.challenge, at);
    if (!issued) return 'invalid';
    return (await this.verifyWith(p, parsed.value, issued.challenge, at)).ok ? 'verified' : 'invalid';
  }

  /** Checks an assertion against the person's own passkey (user verification required) and moves its counter on. */
  private async verifyWith(
    p: Principal,
    response: AuthenticationResponseJSON,
    challenge: string,
    at: Date,
  ): Promise<{ ok: true; row: PasskeyRow } | { ok: false; reason: string }> {
    const [row]: PasskeyRow[] = await this.uow.manager().query(
      `SELECT credential_id, public_key, counter, aaguid, transports, backed_up, name, created_at, last_used_at
       FROM passkeys WHERE tenant_id = $1 AND person_id = $2 AND credential_id = $3 FOR UPDATE`,
      [p.tenant, p.id, response.id],
    );
    if (!row) return { ok: false, reason: 'The assertion was made with no passkey of yours' };
    const { origin, rpID } = this.relyingParty();
    let newCounter: number;
    try {
      const v = await verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: origin,
        expectedRPID: rpID,
        requireUserVerification: true,
        credential: {
          id: row.credential_id,
          publicKey: Buffer.from(row.public_key, 'base64url'),
          counter: Number(row.counter),
          transports: row.transports,
        },
      });
      if (!v.verified || !v.authenticationInfo.userVerified) throw new Error('it did not verify');
      newCounter = v.authenticationInfo.newCounter;
    } catch (e) {
      return { ok: false, reason: `The passkey assertion did not verify: ${why(e)}` };
    }
    await this.uow.manager().query(
      `UPDATE passkeys SET counter = GREATEST(counter, $4), last_used_at = $5
         WHERE tenant_id = $1 AND person_id = $2 AND credential_id = $3`,
      [p.tenant, p.id, row.credential_id, newCounter, at],
    );
    return { ok: true, row };
  }
}

/** SHA-256 hex of the RFC 8785 canonical form: the same digest as a receipt's `args` claim. */
/** The arguments' digest a step-up binds: the audit trail's and the receipt's own (one function for all three). */
export const digest = digestJson;

/**
 * A step-up's challenge: SHA-256 of the RFC 8785 form of {v, tenant, toolCallId, argumentsDigest, nonce}. An
 * auditor derives it again from the proof in the trail and finds it in the assertion's client data.
 */
export function stepUpChallenge(c: {
  tenant: string;
  toolCallId: string;
  argumentsDigest: string;
  nonce: string;
}): Uint8Array<ArrayBuffer> {
  return new Uint8Array(
    createHash('sha256')
      .update(canonicalize({ v: STEP_UP_VERSION, ...c })!)
      .digest(),
  );
}

function summary(r: PasskeyRow): PasskeySummary {
  return {
    id: r.credential_id,
    name: r.name,
    aaguid: r.aaguid,
    backedUp: r.backed_up,
    createdAt: new Date(r.created_at),
    ...(r.last_used_at ? { lastUsedAt: new Date(r.last_used_at) } : {}),
  };
}

/** The library's message, bounded (it never quotes more than the values it compared). */
function why(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.length > 300 ? `${m.slice(0, 300)}…` : m;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A base64url string of 1..max characters, or the fault. */
function b64(v: unknown, max: number, path: string): string | { fault: string } {
  if (typeof v !== 'string') return { fault: `has no ${path} string` };
  if (v.length === 0 || v.length > max) return { fault: `has a ${path} of ${v.length} characters (1 to ${max})` };
  if (!B64URL.test(v)) return { fault: `has a ${path} that is not base64url` };
  return v;
}

/** The challenge the client data names (bounded), or the fault. */
function clientChallenge(clientDataJSON: string): string | { fault: string } {
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
  } catch {
    return { fault: 'has client data that is not JSON' };
  }
  if (!isObject(data)) return { fault: 'has client data that is not a JSON object' };
  return b64(data.challenge, MAX_CHALLENGE, 'challenge');
}

/** The common part: id, rawId, type, the response object and its client data's challenge. */
function credential(
  json: unknown,
):
  | { ok: true; id: string; r: Record<string, unknown>; clientDataJSON: string; challenge: string }
  | { ok: false; reason: string } {
  if (!isObject(json)) return { ok: false, reason: 'is not a JSON object' };
  if (json.type !== 'public-key') return { ok: false, reason: 'is not of type public-key' };
  const id = b64(json.id, MAX_ID, 'id');
  if (typeof id !== 'string') return { ok: false, reason: id.fault };
  if (json.rawId !== id) return { ok: false, reason: 'has a rawId other than its id' };
  if (!isObject(json.response)) return { ok: false, reason: 'has no response object' };
  const clientDataJSON = b64(json.response.clientDataJSON, MAX_CLIENT_DATA, 'response.clientDataJSON');
  if (typeof clientDataJSON !== 'string') return { ok: false, reason: clientDataJSON.fault };
  const challenge = clientChallenge(clientDataJSON);
  if (typeof challenge !== 'string') return { ok: false, reason: challenge.fault };
  return { ok: true, id, r: json.response, clientDataJSON, challenge };
}

function attachment(v: unknown): { authenticatorAttachment?: 'platform' | 'cross-platform' } {
  return v === 'platform' || v === 'cross-platform' ? { authenticatorAttachment: v } : {};
}

/** An AuthenticationResponseJSON rebuilt from checked, bounded fields only (extensions are not read). */
export function parseAssertion(json: unknown): Parsed<AuthenticationResponseJSON> {
  const c = credential(json);
  if (!c.ok) return c;
  const authenticatorData = b64(c.r.authenticatorData, MAX_AUTHENTICATOR_DATA, 'response.authenticatorData');
  if (typeof authenticatorData !== 'string') return { ok: false, reason: authenticatorData.fault };
  const signature = b64(c.r.signature, MAX_SIGNATURE, 'response.signature');
  if (typeof signature !== 'string') return { ok: false, reason: signature.fault };
  let userHandle: string | undefined;
  if (c.r.userHandle !== undefined && c.r.userHandle !== null) {
    const h = b64(c.r.userHandle, MAX_USER_HANDLE, 'response.userHandle');
    if (typeof h !== 'string') return { ok: false, reason: h.fault };
    userHandle = h;
  }
  return {
    ok: true,
    challenge: c.challenge,
    value: {
      id: c.id,
      rawId: c.id,
      type: 'public-key',
      response: {
        clientDataJSON: c.clientDataJSON,
        authenticatorData,
        signature,
        ...(userHandle ? { userHandle } : {}),
      },
      clientExtensionResults: {},
      ...attachment((json as Record<string, unknown>).authenticatorAttachment),
    },
  };
}

/** A RegistrationResponseJSON rebuilt from checked, bounded fields only. */
export function parseRegistration(json: unknown): Parsed<RegistrationResponseJSON> {
  const c = credential(json);
  if (!c.ok) return c;
  const attestationObject = b64(c.r.attestationObject, MAX_ATTESTATION, 'response.attestationObject');
  if (typeof attestationObject !== 'string') return { ok: false, reason: attestationObject.fault };
  const transports = c.r.transports;
  if (
    transports !== undefined &&
    (!Array.isArray(transports) || transports.length > TRANSPORTS.size || transports.some((t) => typeof t !== 'string'))
  )
    return { ok: false, reason: 'has transports that are not a short list of names' };
  const extra: Record<string, unknown> = {};
  if (c.r.authenticatorData !== undefined) {
    const a = b64(c.r.authenticatorData, MAX_ATTESTATION, 'response.authenticatorData');
    if (typeof a !== 'string') return { ok: false, reason: a.fault };
    extra.authenticatorData = a;
  }
  if (c.r.publicKey !== undefined) {
    const k = b64(c.r.publicKey, MAX_PUBLIC_KEY, 'response.publicKey');
    if (typeof k !== 'string') return { ok: false, reason: k.fault };
    extra.publicKey = k;
  }
  if (c.r.publicKeyAlgorithm !== undefined) {
    if (!Number.isSafeInteger(c.r.publicKeyAlgorithm))
      return { ok: false, reason: 'has a publicKeyAlgorithm that is not an integer' };
    extra.publicKeyAlgorithm = c.r.publicKeyAlgorithm;
  }
  return {
    ok: true,
    challenge: c.challenge,
    value: {
      id: c.id,
      rawId: c.id,
      type: 'public-key',
      response: {
        clientDataJSON: c.clientDataJSON,
        attestationObject,
        ...(transports ? { transports: (transports as string[]).filter((t) => TRANSPORTS.has(t)) as never } : {}),
        ...extra,
      },
      clientExtensionResults: {},
      ...attachment((json as Record<string, unknown>).authenticatorAttachment),
    },
  };
}

/**
 * The start-up warning when passkeys cannot work where people open the inbox: a TOLLGATE_PUBLIC_URL that is an IP
 * address, where browsers refuse them. (Without one, the relying party is localhost and the listening port, which
 * a browser on this machine, or one reaching a container through the same port, opens.)
 */
export function relyingPartyWarning(config: Pick<TollgateConfig, 'publicUrl'>): string | undefined {
  if (!config.publicUrl) return undefined;
  const host = new URL(config.publicUrl).hostname;
  return isIP(host.replace(/^\[|\]$/g, ''))
    ? `TOLLGATE_PUBLIC_URL names an IP address (${host}): browsers refuse passkeys there, so approvals whose rule says stepUp: passkey cannot be made. Give it a host name.`
    : undefined;
}
