import { DomainError } from '../shared/domain-error';

export class AdminToolProtectedError extends DomainError {
  constructor(name: string) {
    super('forbidden', 'forbidden', `Tool ${name} was registered by an admin; an agent cannot change it`);
  }
}
