/* One class per transition of a pending change of the control plane; names are past tense. */
import { BaseEvent } from '../shared/event-base';
import type { ChangeKind, PersonRef } from './pending-change.types';

export class ChangeProposed extends BaseEvent<{
  changeId: string;
  kind: ChangeKind;
  summary: string;
  /** SHA-256 (hex) of the RFC 8785 form of what will be applied: the payload itself is not copied into the trail. */
  payloadDigest: string;
  /** The policy version a policy change was made against; it applies only while that version is in force. */
  baseVersion: number | null;
  needed: number;
  expiresAt: string;
}> {
  readonly type = 'ChangeProposed' as const;
}

export class ChangeApproved extends BaseEvent<{
  changeId: string;
  kind: ChangeKind;
  payloadDigest: string;
  /** Distinct admins who have approved so far, the proposer first. */
  approvals: number;
  needed: number;
}> {
  readonly type = 'ChangeApproved' as const;
}

export class ChangeRejected extends BaseEvent<{
  changeId: string;
  kind: ChangeKind;
  payloadDigest: string;
  reason: string | null;
  /** Set when the service closed it: `policy_moved_on` (the policy changed since it was proposed). */
  code?: string;
}> {
  readonly type = 'ChangeRejected' as const;
}

export class ChangeApplied extends BaseEvent<{
  changeId: string;
  kind: ChangeKind;
  payloadDigest: string;
  proposedBy: PersonRef;
  approvedBy: PersonRef[];
}> {
  readonly type = 'ChangeApplied' as const;
}

export class ChangeExpired extends BaseEvent<{ changeId: string; kind: ChangeKind; payloadDigest: string }> {
  readonly type = 'ChangeExpired' as const;
}
