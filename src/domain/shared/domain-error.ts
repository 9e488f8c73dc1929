/**
 * Every rule the domain refuses to break surfaces as a DomainError with a stable,
 * machine-readable `code`. Adapters map `kind` to a transport status (HTTP 404/403/409…);
 * the domain never knows about HTTP.
 */
export type DomainErrorKind =
  | 'unauthenticated'
  | 'not_found'
  | 'forbidden'
  | 'invalid'
  | 'conflict'
  | 'unavailable'
  | 'too_large'
  | 'unsupported'
  | 'rate_limited';

export class DomainError extends Error {
  constructor(
    readonly code: string,
    readonly kind: DomainErrorKind,
    message: string,
    /** Extra machine-readable members for the problem body (e.g. the standing decision). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export interface ValidationFault {
  path: string;
  message: string;
}

/** Input that breaks a documented shape; `faults` name each offending path. */
export class ValidationError extends DomainError {
  constructor(readonly faults: ValidationFault[]) {
    super('validation_failed', 'invalid', faults.map((f) => `${f.path}: ${f.message}`).join('; '), { errors: faults });
  }
}
