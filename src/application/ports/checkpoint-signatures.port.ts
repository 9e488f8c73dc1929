/** Checks that an audit checkpoint (GET /v1/audit/checkpoint) was signed by this service. */
export const CHECKPOINT_SIGNATURES = Symbol('CheckpointSignatures');

export type OpenedCheckpoint =
  /** Not a compact JWS, or not a checkpoint (another `typ`, e.g. an execution receipt). */
  | { status: 'malformed'; reason: string }
  /** A checkpoint whose signature no key of this service verifies (`kid` as its header names it). */
  | { status: 'unverified'; kid?: string }
  | { status: 'verified'; kid: string; payload: Record<string, unknown> };

export interface CheckpointSignatures {
  open(jws: string): Promise<OpenedCheckpoint>;
}

/** The JWS `typ` of a checkpoint, so a receipt (or any other token of the same keys) is never taken for one. */
export const CHECKPOINT_TYP = 'tollgate-checkpoint+jwt';
