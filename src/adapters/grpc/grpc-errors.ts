import { Metadata, status as GrpcStatus, StatusObject } from '@grpc/grpc-js';
import { Problem, toProblem } from '../api/problem';

/**
 * Errors over gRPC: the same problem REST would answer (toProblem: DomainErrors, database outages, bugs), told
 * with the gRPC status that fits its code, the code itself in the trailing metadata `tollgate-code`, and a
 * google.rpc.Status in `grpc-status-details-bin` (ErrorInfo always; BadRequest for validation_failed; RetryInfo
 * when the problem says when to come back).
 */

/** The one table: every problem code of docs/API.md#errors, and the gRPC status that tells it. */
export const GRPC_STATUS_BY_CODE: Readonly<Record<string, GrpcStatus>> = {
  validation_failed: GrpcStatus.INVALID_ARGUMENT,
  // A decision the call's rule does not allow (allowedDecisions, rejectReasons).
  decision_not_allowed: GrpcStatus.PERMISSION_DENIED,
  preview_not_shown: GrpcStatus.PERMISSION_DENIED,
  payload_too_large: GrpcStatus.INVALID_ARGUMENT,
  unsupported_media_type: GrpcStatus.INVALID_ARGUMENT,
  headers_too_large: GrpcStatus.INVALID_ARGUMENT,
  // The single sign-on routes' own (HTTP only): listed so every code of the table has its status.
  invalid_return_to: GrpcStatus.INVALID_ARGUMENT,
  invalid_prompt: GrpcStatus.INVALID_ARGUMENT,
  // The passkey routes are HTTP only (the browser makes passkeys): listed so every code has its status.
  passkey_invalid: GrpcStatus.INVALID_ARGUMENT,
  // start conversation's user.token (the end user's own identity provider token)
  invalid_user_token: GrpcStatus.INVALID_ARGUMENT,
  user_token_is_credential: GrpcStatus.INVALID_ARGUMENT,
  user_token_not_configured: GrpcStatus.INVALID_ARGUMENT,
  // a tool's input schema, and a person's edit checked against it
  input_schema_invalid: GrpcStatus.INVALID_ARGUMENT,
  arguments_invalid: GrpcStatus.INVALID_ARGUMENT,
  unauthenticated: GrpcStatus.UNAUTHENTICATED,
  forbidden: GrpcStatus.PERMISSION_DENIED,
  self_approval: GrpcStatus.PERMISSION_DENIED,
  chat_approval_not_allowed: GrpcStatus.PERMISSION_DENIED,
  step_up_required: GrpcStatus.PERMISSION_DENIED,
  step_up_mismatch: GrpcStatus.PERMISSION_DENIED,
  // Only a web session's cookie needs it, and gRPC takes no cookies: listed so every code has its status.
  csrf_failed: GrpcStatus.PERMISSION_DENIED,
  not_found: GrpcStatus.NOT_FOUND,
  conversation_blocked: GrpcStatus.FAILED_PRECONDITION,
  idempotency_mismatch: GrpcStatus.FAILED_PRECONDITION,
  already_decided: GrpcStatus.FAILED_PRECONDITION,
  already_in_force: GrpcStatus.FAILED_PRECONDITION,
  already_answered: GrpcStatus.FAILED_PRECONDITION,
  // A quota the agent holds (answers and expiries free it), as gRPC tells quotas.
  too_many_open_questions: GrpcStatus.RESOURCE_EXHAUSTED,
  quorum_arguments_mismatch: GrpcStatus.FAILED_PRECONDITION,
  step_up_not_required: GrpcStatus.FAILED_PRECONDITION,
  no_passkey: GrpcStatus.FAILED_PRECONDITION,
  too_many_passkeys: GrpcStatus.FAILED_PRECONDITION,
  not_approved: GrpcStatus.FAILED_PRECONDITION,
  already_executed: GrpcStatus.FAILED_PRECONDITION,
  not_executed: GrpcStatus.FAILED_PRECONDITION,
  already_completed: GrpcStatus.FAILED_PRECONDITION,
  illegal_transition: GrpcStatus.FAILED_PRECONDITION,
  // A halt lasts until a person resumes: retrying on a timer (what UNAVAILABLE invites) would not help.
  halted: GrpcStatus.FAILED_PRECONDITION,
  rate_limited: GrpcStatus.RESOURCE_EXHAUSTED,
  unavailable: GrpcStatus.UNAVAILABLE,
  identity_provider_unavailable: GrpcStatus.UNAVAILABLE,
  internal: GrpcStatus.INTERNAL,
  // Delegation and push subscriptions are REST only (the web settings make them): listed so every code has its status.
  unknown_person: GrpcStatus.INVALID_ARGUMENT,
  ambiguous_person: GrpcStatus.INVALID_ARGUMENT,
  delegation_to_self: GrpcStatus.INVALID_ARGUMENT,
  delegate_is_agent: GrpcStatus.INVALID_ARGUMENT,
  no_delegation: GrpcStatus.NOT_FOUND,
  too_many_delegations: GrpcStatus.RESOURCE_EXHAUSTED,
  too_many_push_subscriptions: GrpcStatus.RESOURCE_EXHAUSTED,
  push_unavailable: GrpcStatus.FAILED_PRECONDITION,
  // The single-use links of emails and push notifications (/act, HTTP only): listed so every code has its status.
  action_token_invalid: GrpcStatus.INVALID_ARGUMENT,
  action_token_expired: GrpcStatus.FAILED_PRECONDITION,
  action_token_used: GrpcStatus.FAILED_PRECONDITION,
  arguments_changed: GrpcStatus.FAILED_PRECONDITION,
  // Four eyes on the control plane (/v1/changes, REST only): listed so every code has its status.
  already_approved: GrpcStatus.FAILED_PRECONDITION,
  change_not_pending: GrpcStatus.FAILED_PRECONDITION,
  policy_moved_on: GrpcStatus.FAILED_PRECONDITION,
  halt_moved_on: GrpcStatus.FAILED_PRECONDITION,
  deny_revoke_governed: GrpcStatus.FAILED_PRECONDITION,
  // Secret arguments: no data key to mask or seal with, or a sealed value no configured key opens.
  data_key_missing: GrpcStatus.FAILED_PRECONDITION,
  sealed_arguments_unreadable: GrpcStatus.FAILED_PRECONDITION,
};

/**
 * Bounds on what an error echoes (bytes of UTF-8). A message can carry what the client sent (an id of 100,000
 * characters); trailers past a client's header limit (grpc-js: 64 KiB, gRPC core: 8 to 16 KiB) would reach it as
 * a bare transport error instead.
 */
const MAX_MESSAGE_BYTES = 1024;
const MAX_MEMBER_BYTES = 4096;
const MAX_VIOLATIONS = 20;
const MAX_FIELD_BYTES = 256;
const MAX_DESCRIPTION_BYTES = 512;

export const TOLLGATE_CODE = 'tollgate-code';
export const STATUS_DETAILS = 'grpc-status-details-bin';
export const ERROR_DOMAIN = 'tollgate';

export interface GrpcProblem extends Partial<StatusObject> {
  code: GrpcStatus;
  details: string;
  metadata: Metadata;
  /** The problem behind it, for the access log (its code; the error of an INTERNAL). */
  problem: Problem;
}

/** Any error a handler threw, as the status to send. */
export function grpcError(e: unknown): GrpcProblem {
  const problem = toProblem(e);
  const code = GRPC_STATUS_BY_CODE[problem.code] ?? GrpcStatus.INTERNAL;
  const extras = Object.fromEntries(
    Object.entries(problem).filter(([k]) => !['type', 'title', 'status', 'detail', 'code', 'errors'].includes(k)),
  );
  const details = bounded(problem.detail, MAX_MESSAGE_BYTES);
  const faults = (problem.errors as FieldFault[] | undefined)
    ?.slice(0, MAX_VIOLATIONS)
    .map((f) => ({ path: bounded(f.path, MAX_FIELD_BYTES), message: bounded(f.message, MAX_DESCRIPTION_BYTES) }));
  const metadata = new Metadata();
  metadata.set(TOLLGATE_CODE, problem.code);
  metadata.set(STATUS_DETAILS, statusDetails(code, details, problem.code, extras, faults));
  return { code, details, metadata, problem };
}

interface FieldFault {
  path: string;
  message: string;
}

// ---- google.rpc.Status and its details, encoded by hand: a few length-delimited fields and two varints. ----

/**
 * google.rpc.Status {code, message, details: [Any ErrorInfo, Any BadRequest?, Any RetryInfo?]}.
 * ErrorInfo.metadata holds the problem's extra members, strings as they are and anything else as JSON.
 */
export function statusDetails(
  code: GrpcStatus,
  message: string,
  reason: string,
  extras: Record<string, unknown>,
  faults?: FieldFault[],
): Buffer {
  const metadata = Object.entries(extras).map(([k, v]) =>
    bytes(
      3,
      Buffer.concat([text(1, k), text(2, bounded(typeof v === 'string' ? v : JSON.stringify(v), MAX_MEMBER_BYTES))]),
    ),
  );
  const details = [any('google.rpc.ErrorInfo', Buffer.concat([text(1, reason), text(2, ERROR_DOMAIN), ...metadata]))];
  if (faults?.length) {
    // BadRequest { repeated FieldViolation field_violations = 1 } with FieldViolation { field = 1, description = 2 }.
    details.push(
      any(
        'google.rpc.BadRequest',
        Buffer.concat(faults.map((f) => bytes(1, Buffer.concat([text(1, f.path), text(2, f.message)])))),
      ),
    );
  }
  if (typeof extras.retryAfter === 'number' && Number.isFinite(extras.retryAfter)) {
    // RetryInfo { google.protobuf.Duration retry_delay = 1 } with Duration { int64 seconds = 1 }.
    details.push(
      any(
        'google.rpc.RetryInfo',
        bytes(1, Buffer.concat([varint(1 << 3), varint(Math.max(1, Math.ceil(extras.retryAfter)))])),
      ),
    );
  }
  return Buffer.concat([varint(1 << 3), varint(code), text(2, message), ...details.map((d) => bytes(3, d))]);
}

/** `s` cut to at most `max` bytes of UTF-8, between characters, ending with '…' when cut. */
export function bounded(s: string, max: number): string {
  if (s.length * 3 <= max || Buffer.byteLength(s) <= max) return s;
  let out = '';
  let used = 3; // the '…'
  for (const ch of s) {
    const n = Buffer.byteLength(ch);
    if (used + n > max) break;
    out += ch;
    used += n;
  }
  return `${out}…`;
}

function any(type: string, value: Buffer): Buffer {
  return Buffer.concat([text(1, `type.googleapis.com/${type}`), bytes(2, value)]);
}

function varint(n: number): Buffer {
  const out: number[] = [];
  for (; n > 127; n = Math.floor(n / 128)) out.push((n % 128) | 128);
  out.push(n);
  return Buffer.from(out);
}

function bytes(field: number, value: Buffer): Buffer {
  return Buffer.concat([varint((field << 3) | 2), varint(value.length), value]);
}

function text(field: number, value: string): Buffer {
  return bytes(field, Buffer.from(value, 'utf8'));
}
