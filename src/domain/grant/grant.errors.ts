import { DomainError } from '../shared/domain-error';
import type { GrantScope } from '../policy/grant-limit';

export class GrantNotFoundError extends DomainError {
  constructor(id: string) {
    super('not_found', 'not_found', `No grant ${id}`);
  }
}

export class GrantRevokeForbiddenError extends DomainError {
  constructor(scope: GrantScope) {
    super(
      'forbidden',
      'forbidden',
      `Only an admin may revoke a grant in scope ${scope}; an approver may revoke a conversation grant`,
    );
  }
}
