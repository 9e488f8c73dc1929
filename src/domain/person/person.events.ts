import { BaseEvent } from '../shared/event-base';

/**
 * A decision clicked in a channel by a user who does not act as a person, refused and recorded, as separation of
 * duties' refusals are (`DecisionRefused`, with its own code). Nothing else changed.
 * - `unlinked_channel_user`: linked to no person, or to one never seen in the tenant;
 * - `stale_person`: linked to a person whose last sign-in is older than TOLLGATE_PERSON_MAX_AGE, so the roles on
 *   record are no longer trusted (a code of its own: the link is fine, the person has to sign in again).
 * `personId`: the person the link names, when it names one.
 */
export class UnlinkedDecisionRefused extends BaseEvent<{
  decision: 'approve' | 'reject' | 'always_allow';
  code: 'unlinked_channel_user' | 'stale_person';
  refusedBy: string;
  via: string;
  channelUser: string;
  personId?: string;
  reason: string;
  level: string;
  rule: number | null;
  policyVersion: number;
}> {
  readonly type = 'DecisionRefused' as const;
}

/**
 * A person registered a passkey (WebAuthn credential) for the approvals whose rule says `stepUp: passkey`.
 * `publicKey` is the credential's COSE key (base64url): with it an auditor checks every step-up assertion the
 * trail holds, without trusting the `passkeys` table.
 */
export class PasskeyRegistered extends BaseEvent<{
  personId: string;
  credentialId: string;
  aaguid: string;
  name: string;
  backedUp: boolean;
  deviceType: string;
  publicKey: string;
}> {
  readonly type = 'PasskeyRegistered' as const;
}

/**
 * A passkey removed: by its owner (with an assertion made by one of theirs), or by an admin for a lost device
 * (with an assertion made by one of the admin's own; `removedBy` names the admin).
 */
export class PasskeyRemoved extends BaseEvent<{ personId: string; credentialId: string; removedBy: string }> {
  readonly type = 'PasskeyRemoved' as const;
}

/** A delegation as the audit trail records it: who delegates, to whom, and for which period. */
interface DelegationRecord {
  /** The delegator. */
  personId: string;
  to: { id: string; name?: string };
  from: string;
  until: string;
  reason?: string;
}

/**
 * A person delegated their decisions (out of office): while it holds, what would reach them reaches `to`, who
 * decides on their behalf with their rights, no more. `replaces`: the delegation this one took the place of (one
 * at a time), when one still held or was to come. A delegation that reaches its `until` simply stops applying:
 * no event marks that.
 */
export class DelegationSet extends BaseEvent<DelegationRecord & { replaces?: Omit<DelegationRecord, 'personId'> }> {
  readonly type = 'DelegationSet' as const;
}

/** A person ended their delegation before its `until` (or withdrew one yet to start): `endedAt` is when. */
export class DelegationEnded extends BaseEvent<DelegationRecord & { endedAt: string }> {
  readonly type = 'DelegationEnded' as const;
}
