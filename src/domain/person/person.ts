import { Channel, isAgent, Principal } from '../shared/actor';

/**
 * One person of a tenant, whatever channel they come through: their id is their token's `sub` (an identity
 * provider's or Tollgate's own), with the name, email and roles their last authenticated request carried.
 */
export interface Person {
  tenantId: string;
  id: string;
  name?: string;
  email?: string;
  roles: readonly string[];
  firstSeenAt: Date;
  lastSeenAt: Date;
}

/** How a channel user came to be linked to a person: named in the settings, or by the same verified email. */
export type LinkedBy = 'config' | 'email';

/** A channel's own user (a Slack user id) linked to a person. */
export interface ChannelIdentity {
  tenantId: string;
  channel: Channel;
  channelUser: string;
  personId: string;
  linkedBy: LinkedBy;
  linkedAt: Date;
}

/** What a sighting records of a person: only people are persons; an agent token never makes or updates one. */
export function sightingOf(p: Principal): Pick<Person, 'tenantId' | 'id' | 'name' | 'email' | 'roles'> | null {
  if (isAgent(p)) return null;
  return {
    tenantId: p.tenant,
    id: p.id,
    ...(p.name ? { name: p.name } : {}),
    ...(p.email ? { email: p.email } : {}),
    roles: [...p.roles],
  };
}

/**
 * The person acting through a channel as its user: the person's id and the roles of their record (never the
 * channel's), so separation of duties and quorums see one person whichever channel they use.
 */
export function personThrough<V extends Channel>(
  person: Person,
  via: V,
  channelUser: string,
): Principal & { via: V; channelUser: string } {
  return {
    id: person.id,
    tenant: person.tenantId,
    roles: [...person.roles],
    ...(person.name ? { name: person.name } : {}),
    ...(person.email ? { email: person.email } : {}),
    via,
    channelUser,
  };
}
