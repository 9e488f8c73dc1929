import { Metadata, status as GrpcStatus, StatusObject } from '@grpc/grpc-js';
import { Problem } from '../http/problem';
import { toProblem } from '../http/problem.filter';

/**
 * Errors over gRPC: the same problem REST would answer (toProblem: DomainErrors, database outages, bugs), told
 * with the gRPC status that fits its code, the code itself in the trailing metadata `tollgate-code`, and a
 * google.rpc.Status in `grpc-status-details-bin` (ErrorInfo always; BadRequest for validation_failed; RetryInfo
 * when the problem says when to come back).
 */

/** The one table: every problem code of docs/API.md#errors, and the gRPC status that tells it. */
export const GRPC_STATUS_BY_CODE: Readonly<Record<string, GrpcStatus>> = {
  validation_failed: GrpcStatus.INVALID_ARGUMENT,
  payload_too_large: GrpcStatus.INVALID_ARGUMENT,
  unsupported_media_type: GrpcStatus.INVALID_ARGUMENT,
  headers_too_large: GrpcStatus.INVALID_ARGUMENT,
  unauthenticated: GrpcStatus.UNAUTHENTICATED,
  forbidden: GrpcStatus.PERMISSION_DENIED,
  self_approval: GrpcStatus.PERMISSION_DENIED,
  not_found: GrpcStatus.NOT_FOUND,
  conversation_blocked: GrpcStatus.FAILED_PRECONDITION,
  idempotency_mismatch: GrpcStatus.FAILED_PRECONDITION,
  already_decided: GrpcStatus.FAILED_PRECONDITION,
  already_in_force: GrpcStatus.FAILED_PRECONDITION,
  already_answered: GrpcStatus.FAILED_PRECONDITION,
  // A quota the agent holds (answers and expiries free it), as gRPC tells quotas.
  too_many_open_questions: GrpcStatus.RESOURCE_EXHAUSTED,
  quorum_arguments_mismatch: GrpcStatus.FAILED_PRECONDITION,
  not_approved: GrpcStatus.FAILED_PRECONDITION,
  already_executed: GrpcStatus.FAILED_PRECONDITION,
  not_executed: GrpcStatus.FAILED_PRECONDITION,
  already_completed: GrpcStatus.FAILED_PRECONDITION,
  illegal_transition: GrpcStatus.FAILED_PRECONDITION,
  // A halt lasts until a person resumes: retrying on a timer (what UNAVAILABLE invites) would not help.
  halted: GrpcStatus.FAILED_PRECONDITION,
  rate_limited: GrpcStatus.RESOURCE_EXHAUSTED,
  unavailable: GrpcStatus.UNAVAILABLE,
  internal: GrpcStatus.INTERNAL,
};

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
  const extras = Object.fromEntries(Object.entries(problem).filter(([k]) => !['type', 'title', 'status', 'detail', 'code', 'errors'].includes(k)));
  const metadata = new Metadata();
  metadata.set(TOLLGATE_CODE, problem.code);
  metadata.set(STATUS_DETAILS, statusDetails(code, problem.detail, problem.code, extras, problem.errors as FieldFault[] | undefined));
  return { code, details: problem.detail, metadata, problem };
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
export function statusDetails(code: GrpcStatus, message: string, reason: string, extras: Record<string, unknown>, faults?: FieldFault[]): Buffer {
  const metadata = Object.entries(extras).map(([k, v]) => bytes(3, Buffer.concat([text(1, k), text(2, typeof v === 'string' ? v : JSON.stringify(v))])));
  const details = [any('google.rpc.ErrorInfo', Buffer.concat([text(1, reason), text(2, ERROR_DOMAIN), ...metadata]))];
  if (faults?.length) {
    // BadRequest { repeated FieldViolation field_violations = 1 } with FieldViolation { field = 1, description = 2 }.
    details.push(any('google.rpc.BadRequest', Buffer.concat(faults.map((f) => bytes(1, Buffer.concat([text(1, f.path), text(2, f.message)]))))));
  }
  if (typeof extras.retryAfter === 'number' && Number.isFinite(extras.retryAfter)) {
    // RetryInfo { google.protobuf.Duration retry_delay = 1 } with Duration { int64 seconds = 1 }.
    details.push(any('google.rpc.RetryInfo', bytes(1, Buffer.concat([varint(1 << 3), varint(Math.max(1, Math.ceil(extras.retryAfter)))]))));
  }
  return Buffer.concat([varint(1 << 3), varint(code), text(2, message), ...details.map((d) => bytes(3, d))]);
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
