import type {
  ChangeKind,
  ChangeStatus,
  PendingChange,
  PersonRef,
} from '../../domain/governance/pending-change.aggregate';

/** A pending change of the control plane as people see it (REST, web inbox, CLI). */
export interface PendingChangeView {
  id: string;
  kind: ChangeKind;
  summary: string;
  /** What will be applied (a webhook's secret is never part of it). */
  payload: Record<string, unknown>;
  /** SHA-256 (hex) of the RFC 8785 form of `payload`, as in the ChangeProposed event. */
  payloadDigest: string;
  /** The policy version a policy change was made against; it applies only while that version is in force. */
  baseVersion: number | null;
  proposedBy: PersonRef;
  /** Distinct admins who approved so far, the proposer first. */
  approvals: Array<{ by: PersonRef; at: string }>;
  needed: number;
  status: ChangeStatus;
  createdAt: string;
  expiresAt: string;
  closedAt: string | null;
  rejectedBy: PersonRef | null;
  reason: string | null;
}

/** The answer of a governed request that did not take effect yet (202 Accepted). */
export interface HeldForApproval {
  pendingChange: PendingChangeView;
}

export function pendingChangeView(change: PendingChange, now: Date): PendingChangeView {
  const s = change.snapshot();
  return {
    id: s.id,
    kind: s.kind,
    summary: s.summary,
    payload: s.payload,
    payloadDigest: s.payloadDigest,
    baseVersion: s.baseVersion,
    proposedBy: { id: s.proposedBy.id, ...(s.proposedBy.name ? { name: s.proposedBy.name } : {}) },
    approvals: s.approvals.map((a) => ({ by: a.by, at: a.at.toISOString() })),
    needed: s.needed,
    status: change.statusAt(now),
    createdAt: s.createdAt.toISOString(),
    expiresAt: s.expiresAt.toISOString(),
    closedAt: s.closedAt ? s.closedAt.toISOString() : null,
    rejectedBy: s.rejectedBy,
    reason: s.reason,
  };
}
