import type { ChannelIdentity, LinkedBy, Person } from '../person';

/** Why a channel user does not act as a person; each is told to them and recorded. */
export type Unlinked =
  | { kind: 'unlinked'; reason: string }
  | { kind: 'ambiguous'; reason: string }
  | { kind: 'unseen'; personId: string; reason: string };

export type Linked = { kind: 'person'; person: Person; linkedBy: LinkedBy; store: boolean };

/**
 * Which person a channel user is by the links already known, in this order:
 * 1. the settings name them (`U777=ann`): the settings are the operator's word and win over an email link;
 * 2. a stored link made by email (a link stored from settings the operator has since removed no longer counts).
 * `ask-email`: neither; the channel's verified email may link them (`byEmail`).
 * A person never seen has no roles on record, so they cannot act in a channel until they sign in once.
 */
export function knownLink(facts: {
  configured: string | undefined;
  configuredPerson: Person | null;
  stored: ChannelIdentity | null;
  storedPerson: Person | null;
}): Linked | Unlinked | { kind: 'ask-email' } {
  const { configured, stored } = facts;
  if (configured !== undefined) {
    if (!facts.configuredPerson) return unseen(configured);
    const same = stored?.personId === configured && stored.linkedBy === 'config';
    return { kind: 'person', person: facts.configuredPerson, linkedBy: 'config', store: !same };
  }
  if (stored?.linkedBy === 'email')
    return facts.storedPerson
      ? { kind: 'person', person: facts.storedPerson, linkedBy: 'email', store: false }
      : unseen(stored.personId);
  return { kind: 'ask-email' };
}

/**
 * The channel's verified email links its user to the one person of the tenant with that email (compared
 * case-insensitively by the query). None: unlinked. Several: refused, as picking one would be a guess.
 */
export function linkByEmail(email: string | undefined, persons: Person[]): Linked | Unlinked {
  if (!email || persons.length === 0)
    return {
      kind: 'unlinked',
      reason: email
        ? 'no Tollgate person has the email of this channel user'
        : 'the channel user has no verified email',
    };
  if (persons.length > 1)
    return { kind: 'ambiguous', reason: `${persons.length} Tollgate persons share the email of this channel user` };
  return { kind: 'person', person: persons[0], linkedBy: 'email', store: true };
}

function unseen(personId: string): Unlinked {
  return {
    kind: 'unseen',
    personId,
    reason: `the channel user is linked to "${personId}", who has not signed in to Tollgate yet`,
  };
}
