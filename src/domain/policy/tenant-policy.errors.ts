import { DomainError } from '../shared/domain-error';

export class PolicyVersionNotFoundError extends DomainError {
  constructor(version: number) {
    super('not_found', 'not_found', `Policy version ${version} not found`);
  }
}

/** A rollback to the version in force would change nothing but the version number. */
export class PolicyVersionInForceError extends DomainError {
  constructor(target: number, current: number) {
    const detail =
      target === current
        ? `Policy version ${target} is the version in force`
        : `Policy version ${target} has the same document as version ${current}, the version in force`;
    super('already_in_force', 'conflict', `${detail}: there is nothing to roll back`);
  }
}
