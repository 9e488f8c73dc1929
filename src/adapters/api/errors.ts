import { DomainError } from '../../domain/shared/domain-error';

/** No credential, or one that is not valid: 401 on REST, UNAUTHENTICATED on gRPC. */
export class UnauthenticatedError extends DomainError {
  constructor(detail: string) {
    super('unauthenticated', 'unauthenticated', detail);
  }
}

/** Known, but not allowed to do this: 403 on REST, PERMISSION_DENIED on gRPC. */
export class ForbiddenError extends DomainError {
  constructor(detail: string) {
    super('forbidden', 'forbidden', detail);
  }
}
