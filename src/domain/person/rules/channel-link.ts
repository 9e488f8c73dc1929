import type { ChannelIdentity, LinkedBy, Person } from '../person';

/** Why a channel user does not act as a person; each is told to them and recorded. */
export type Unlinked =
  | { kind: 'unlinked'; reason: string }
  | { kind: 'ambiguous'; reason: string }
  | { kind: 'unseen'; personId: string; reason: string }
  | { kind: 'stale'; personId: string; maxAgeSeconds: number; reason: string };

export type Linked = { kind: 'person'; person: Person; linkedBy: LinkedBy; store: boolean };

/** The channel's verified email is needed: to link for the first time, or to re-check a link made by email. */
export type AskEmail = { kind: 'ask-email'; linkedBefore?: string };

/**
 * Which person a channel user is by the links already known, in this order:
 * 1. the settings name them (`U777=ann`): the settings are the operator's word and win over an email link;
 * 2. a stored link made by email, which holds only while the email still matches (`linkByEmail` with
 *    `linkedBefore`): emails change hands, and a link made once must not outlive the match that made it;
 * 3. neither: the channel's verified email may link them.
 * A link stored from settings the operator has since removed no longer counts.
 * A person never seen has no roles on record, so they cannot act in a channel until they sign in once.
 */
export function knownLink(facts: {
  configured: string | undefined;
  configuredPerson: Person | null;
  stored: ChannelIdentity | null;
}): Linked | Unlinked | AskEmail {
  const { configured, stored } = facts;
  if (configured !== undefined) {
    if (!facts.configuredPerson) return unseen(configured);
    const same = stored?.personId === configured && stored.linkedBy === 'config';
    return { kind: 'person', person: facts.configuredPerson, linkedBy: 'config', store: !same };
  }
  if (stored?.linkedBy === 'email') return { kind: 'ask-email', linkedBefore: stored.personId };
  return { kind: 'ask-email' };
}

/**
 * The channel's verified email links its user to the one person of the tenant with that email and at least one
 * role (compared case-insensitively by the query). A person with no role takes no part: anyone whose provider
 * token maps to no role could otherwise claim an address and capture, or make ambiguous, its owner's link.
 * None: unlinked. Several: refused, as picking one would be a guess. `linkedBefore`: the person a stored email
 * link names; the link is stored again only when the match is now someone else.
 */
export function linkByEmail(email: string | undefined, persons: Person[], linkedBefore?: string): Linked | Unlinked {
  const candidates = persons.filter((p) => p.roles.length > 0);
  const dropped = linkedBefore !== undefined ? `; its link to "${linkedBefore}" by email no longer holds` : '';
  if (!email || candidates.length === 0)
    return {
      kind: 'unlinked',
      reason:
        (email
          ? 'no Tollgate person with a role has the email of this channel user'
          : 'the channel user has no verified email') + dropped,
    };
  if (candidates.length > 1)
    return {
      kind: 'ambiguous',
      reason: `${candidates.length} Tollgate persons share the email of this channel user${dropped}`,
    };
  const [person] = candidates;
  return { kind: 'person', person, linkedBy: 'email', store: person.id !== linkedBefore };
}

/**
 * A person acts in a channel with the roles of their last sign-in; past `maxAgeSeconds` those roles are no longer
 * trusted: someone removed from a group, or disabled, at the identity provider would otherwise keep deciding from
 * the channel for as long as they never sign in again. Null: fresh enough.
 */
export function staleSignIn(person: Person, now: Date, maxAgeSeconds: number): Unlinked | null {
  if (now.getTime() - person.lastSeenAt.getTime() <= maxAgeSeconds * 1000) return null;
  return {
    kind: 'stale',
    personId: person.id,
    maxAgeSeconds,
    reason: `the last sign-in of "${person.id}" on record is older than ${spanText(maxAgeSeconds)}`,
  };
}

/** `7 days`, `12 hours`, `90 seconds`: the largest whole unit, as people read it. */
export function spanText(seconds: number): string {
  const [n, unit] =
    seconds % 86_400 === 0
      ? [seconds / 86_400, 'day']
      : seconds % 3600 === 0
        ? [seconds / 3600, 'hour']
        : seconds % 60 === 0
          ? [seconds / 60, 'minute']
          : [seconds, 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

function unseen(personId: string): Unlinked {
  return {
    kind: 'unseen',
    personId,
    reason: `the channel user is linked to "${personId}", who has not signed in to Tollgate yet`,
  };
}
