import type { ChannelIdentity, Person } from '../../domain/person/person';
import type { DomainEvent } from '../../domain/shared/domain-event';
import type { Channel } from '../../domain/shared/actor';

export const PERSONS = Symbol('PersonRepository');

/** The tenant's persons and the channel users linked to them (tables `persons`, `person_identities`). */
export interface PersonRepository {
  /** Makes the person, or updates their name, email and roles as seen now (`last_seen_at`). */
  seen(p: Pick<Person, 'tenantId' | 'id' | 'name' | 'email' | 'roles'>, at: Date): Promise<void>;
  find(tenantId: string, id: string): Promise<Person | null>;
  /** The persons with at least one role whose email is this one, compared case-insensitively (at most a few). */
  withEmail(tenantId: string, email: string): Promise<Person[]>;
  /**
   * The persons with one of `roles`, or whose id or email (lowercased) is in `named`: those an approval request may
   * reach. At most `limit`, by id.
   */
  reachable(tenantId: string, who: { roles: string[]; named: string[] }, limit: number): Promise<Person[]>;
  linkOf(tenantId: string, channel: Channel, channelUser: string): Promise<ChannelIdentity | null>;
  /** The channel users linked to these persons on `channel` (at most a few per person). */
  channelUsersOf(tenantId: string, channel: Channel, personIds: readonly string[]): Promise<string[]>;
  /** Stores (or replaces) the link of a channel user to a person. */
  link(identity: ChannelIdentity): Promise<void>;
  /** Appends events about persons and their channels (a refused unlinked decision) to the audit trail. */
  record(events: DomainEvent[]): Promise<void>;
}
