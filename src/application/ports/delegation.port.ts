import type { Delegation } from '../../domain/person/delegation';
import type { Person } from '../../domain/person/person';
import type { DomainEvent } from '../../domain/shared/domain-event';

export const DELEGATIONS = Symbol('DelegationRepository');
/** TOLLGATE_PERSON_MAX_AGE in seconds: past it, a person's recorded roles are not trusted (nor lent to a delegate). */
export const PERSON_MAX_AGE_SECONDS = Symbol('PersonMaxAgeSeconds');

/** A delegation with its delegator's record: whose rights a delegate may decide with (domain delegatedAuthorities). */
export interface DelegationFrom {
  delegation: Delegation;
  delegator: Person;
}

/** A page of the tenant's delegations, with the names on record of both people. */
export interface DelegationPage {
  items: Array<{ delegation: Delegation; delegatorName?: string; delegateName?: string }>;
  nextCursor: string | null;
}

/** Delegations (table `delegations`): one per delegating person, checked by time. */
export interface DelegationRepository {
  /** The person's delegation, whatever its time (it may be over); `lock`: until the unit of work ends. */
  of(tenantId: string, personId: string, opts?: { lock?: boolean }): Promise<Delegation | null>;
  /** Stores it, replacing the person's delegation if they had one. */
  put(d: Delegation): Promise<void>;
  /** Removes the person's delegation, if any. */
  remove(tenantId: string, personId: string): Promise<void>;
  /**
   * The delegations to this person that hold at `at`, each with its delegator's record (at most `limit`, by the
   * delegator's id): whose rights the person may decide with.
   */
  toPerson(tenantId: string, personId: string, at: Date, limit: number): Promise<DelegationFrom[]>;
  /** The delegations to any of these persons that hold at `at`, each with its delegator's record (the stream). */
  toPersons(tenantId: string, personIds: readonly string[], at: Date, limit: number): Promise<DelegationFrom[]>;
  /** The delegations of any of these persons that hold at `at`, each with its delegate's record. */
  fromPersons(
    tenantId: string,
    personIds: readonly string[],
    at: Date,
    limit: number,
  ): Promise<Array<{ delegation: Delegation; delegate: Person }>>;
  /** How many delegations to this person are not over at `at`, leaving out `except`'s own. */
  countTo(tenantId: string, personId: string, at: Date, except: string): Promise<number>;
  /** The tenant's delegations not over at `at` (holding or to come), by delegator id; `cursor` is opaque. */
  list(tenantId: string, at: Date, page: { cursor?: string; limit: number }): Promise<DelegationPage>;
  /** Whether this id runs conversations in the tenant as an agent: an agent is never a delegate. */
  isAgent(tenantId: string, id: string): Promise<boolean>;
  /** Appends the delegations' events to the audit trail, in the unit of work's transaction. */
  record(events: DomainEvent[]): Promise<void>;
}
