import { DomainError } from '../shared/domain-error';

/*
 * Why a delegation (PUT /v1/me/delegation) is refused. Each has a stable code; bad times are validation_failed
 * naming `from` or `until` (delegation.ts).
 */

/** Only people delegate: an agent token has no decisions of its own to hand over. */
export class DelegationByAgentError extends DomainError {
  constructor() {
    super('forbidden', 'forbidden', 'Only people delegate: an agent token has no decisions to hand over');
  }
}

/** The delegate is no person of this tenant: they must have signed in once (or the email names no one). */
export class UnknownPersonError extends DomainError {
  constructor(to: string) {
    super(
      'unknown_person',
      'invalid',
      `No person "${to}" is on record in this tenant: name someone by their id, or by an email that exactly one person with a role has; they must have signed in to Tollgate once`,
    );
  }
}

/** An email that several persons share names no one: picking one would be a guess. */
export class AmbiguousPersonError extends DomainError {
  constructor(to: string) {
    super('ambiguous_person', 'invalid', `Several persons have the email "${to}": name the delegate by their id`);
  }
}

export class DelegationToSelfError extends DomainError {
  constructor() {
    super('delegation_to_self', 'invalid', 'A delegation names someone else: you cannot delegate to yourself');
  }
}

/** Decisions are people's: an agent (an id that runs conversations in this tenant) is never a delegate. */
export class DelegateIsAgentError extends DomainError {
  constructor(to: string) {
    super('delegate_is_agent', 'invalid', `"${to}" is an agent of this tenant: only a person may decide for you`);
  }
}

/** A person acts for a bounded number of others at once, so what they may decide stays readable (and cheap). */
export class TooManyDelegationsError extends DomainError {
  constructor(to: string, limit: number) {
    super(
      'too_many_delegations',
      'conflict',
      `"${to}" already stands in for ${limit} people (delegations that hold or are to come), the most one person may: choose someone else`,
      { limit },
    );
  }
}

/** The caller has no delegation that holds now or is to come. */
export class NoDelegationError extends DomainError {
  constructor() {
    super('no_delegation', 'not_found', 'You have no delegation that holds now or is to come');
  }
}
