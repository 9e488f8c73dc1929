import { AggregateRoot } from '../shared/aggregate-root';
import { Actor, SYSTEM_ACTOR } from '../shared/actor';
import { ValidationError } from '../shared/domain-error';
import {
  ChangeAlreadyApprovedError,
  ChangeDecisionForbiddenError,
  ChangeNotPendingError,
  ChangeSelfApprovalError,
} from './pending-change.errors';
import { ChangeApplied, ChangeApproved, ChangeExpired, ChangeProposed, ChangeRejected } from './pending-change.events';

import { ChangeKind, ChangeStatus, PersonRef } from './pending-change.types';

export { CHANGE_KINDS, CHANGE_STATUSES } from './pending-change.types';
export type { ChangeKind, ChangeStatus, PersonRef } from './pending-change.types';

/** How long a proposed change waits for its approvals: 7 days. */
export const CHANGE_TTL_MS = 7 * 24 * 3600 * 1000;
export const MIN_QUORUM = 2;
export const MAX_QUORUM = 10;
const MAX_SUMMARY = 500;
const MAX_REASON = 1000;

export interface ChangeApproval {
  by: PersonRef;
  at: Date;
}

export interface PendingChangeState {
  tenantId: string;
  id: string;
  kind: ChangeKind;
  summary: string;
  /** What will be applied, as the original request gave it (never a secret: those are kept beside it). */
  payload: Record<string, unknown>;
  payloadDigest: string;
  /** The policy version a policy change was made against (policy_update, policy_rollback); else null. */
  baseVersion: number | null;
  /** The proposer as the original request's actor: the change is applied in their name. */
  proposedBy: Actor;
  /** Distinct admins who approved, the proposer first (proposing counts as one approval). */
  approvals: ChangeApproval[];
  needed: number;
  status: ChangeStatus;
  createdAt: Date;
  expiresAt: Date;
  /** When it was applied, rejected or expired. */
  closedAt: Date | null;
  rejectedBy: PersonRef | null;
  reason: string | null;
}

export function personRef(a: Pick<Actor, 'id' | 'name'>): PersonRef {
  return { id: a.id, ...(a.name ? { name: a.name } : {}) };
}

/** Only a whole number of 2 to 10 is a quorum of the control plane. */
export function quorumFault(quorum: unknown): string | undefined {
  if (typeof quorum !== 'number' || !Number.isInteger(quorum) || quorum < MIN_QUORUM || quorum > MAX_QUORUM)
    return `must be a whole number from ${MIN_QUORUM} to ${MAX_QUORUM}`;
  return undefined;
}

/**
 * A change of the control plane waiting for a second admin (four eyes). Proposing counts as the proposer's
 * approval; distinct admins approve until `needed` is reached, and then it is `ready` to apply. The applying
 * itself is the application's (it runs the original command); this aggregate records that it happened once.
 * Any admin may reject it (the proposer too: withdrawing); after `expiresAt` it can only expire.
 */
export class PendingChange extends AggregateRoot {
  private constructor(
    private s: PendingChangeState,
    version: number,
  ) {
    super(s.tenantId, version);
  }

  static rehydrate(state: PendingChangeState, version: number): PendingChange {
    return new PendingChange(state, version);
  }

  static propose(input: {
    tenantId: string;
    id: string;
    kind: ChangeKind;
    summary: string;
    payload: Record<string, unknown>;
    payloadDigest: string;
    baseVersion?: number | null;
    by: Actor;
    at: Date;
    quorum: number;
    ttlMs?: number;
  }): PendingChange {
    const fault = quorumFault(input.quorum);
    if (fault) throw new ValidationError([{ path: 'governance.quorum', message: fault }]);
    if (input.by.kind !== 'person') throw new ChangeDecisionForbiddenError();
    const expiresAt = new Date(input.at.getTime() + (input.ttlMs ?? CHANGE_TTL_MS));
    const c = new PendingChange(
      {
        tenantId: input.tenantId,
        id: input.id,
        kind: input.kind,
        summary: input.summary.slice(0, MAX_SUMMARY),
        payload: input.payload,
        payloadDigest: input.payloadDigest,
        baseVersion: input.baseVersion ?? null,
        proposedBy: input.by,
        approvals: [{ by: personRef(input.by), at: input.at }],
        needed: input.quorum,
        status: 'pending',
        createdAt: input.at,
        expiresAt,
        closedAt: null,
        rejectedBy: null,
        reason: null,
      },
      0,
    );
    c.record(
      new ChangeProposed(c.envelope(input.by, input.at), {
        changeId: c.s.id,
        kind: c.s.kind,
        summary: c.s.summary,
        payloadDigest: c.s.payloadDigest,
        baseVersion: c.s.baseVersion,
        needed: c.s.needed,
        expiresAt: expiresAt.toISOString(),
      }),
    );
    return c;
  }

  /** Records ChangeExpired if the deadline has passed while it was pending; true when it did. */
  expireIfDue(at: Date): boolean {
    if (this.s.status !== 'pending' || at.getTime() < this.s.expiresAt.getTime()) return false;
    this.s = { ...this.s, status: 'expired', closedAt: at };
    this.record(
      new ChangeExpired(this.envelope(SYSTEM_ACTOR, at), {
        changeId: this.s.id,
        kind: this.s.kind,
        payloadDigest: this.s.payloadDigest,
      }),
    );
    return true;
  }

  /**
   * One more distinct admin's approval. Refused: not an admin (or not a person), not pending (an expired
   * deadline is recorded first: call `expireIfDue` and save before), the proposer, an admin who approved already.
   * Answers whether the quorum is now reached (then apply, and call `applied`).
   */
  approve(by: Actor, at: Date): { ready: boolean } {
    this.mustBeDecidableBy(by, at);
    if (by.id === this.s.proposedBy.id) throw new ChangeSelfApprovalError();
    if (this.s.approvals.some((a) => a.by.id === by.id)) throw new ChangeAlreadyApprovedError();
    this.s = { ...this.s, approvals: [...this.s.approvals, { by: personRef(by), at }] };
    this.record(
      new ChangeApproved(this.envelope(by, at), {
        changeId: this.s.id,
        kind: this.s.kind,
        payloadDigest: this.s.payloadDigest,
        approvals: this.s.approvals.length,
        needed: this.s.needed,
      }),
    );
    return { ready: this.s.approvals.length >= this.s.needed };
  }

  /** The quorum was reached and the original request has taken effect, once. */
  applied(by: Actor, at: Date): void {
    if (this.s.status !== 'pending') throw new ChangeNotPendingError(this.s.id, this.s.status);
    if (this.s.approvals.length < this.s.needed) throw new Error('a change applies only once its quorum is reached');
    this.s = { ...this.s, status: 'applied', closedAt: at };
    this.record(
      new ChangeApplied(this.envelope(by, at), {
        changeId: this.s.id,
        kind: this.s.kind,
        payloadDigest: this.s.payloadDigest,
        proposedBy: personRef(this.s.proposedBy),
        approvedBy: this.s.approvals.slice(1).map((a) => a.by),
      }),
    );
  }

  /** Any admin ends it, the proposer included (withdrawing it). */
  reject(by: Actor, at: Date, reason?: string): void {
    this.mustBeDecidableBy(by, at);
    this.close(by, at, reason ?? null);
  }

  /** The service ends it: what it was made against is gone (the policy moved on). */
  supersede(at: Date, code: string, reason: string): void {
    if (this.s.status !== 'pending') return;
    this.close(SYSTEM_ACTOR, at, reason, code);
  }

  private close(by: Actor, at: Date, reason: string | null, code?: string): void {
    const r = reason === null ? null : reason.slice(0, MAX_REASON);
    this.s = { ...this.s, status: 'rejected', closedAt: at, rejectedBy: personRef(by), reason: r };
    this.record(
      new ChangeRejected(this.envelope(by, at), {
        changeId: this.s.id,
        kind: this.s.kind,
        payloadDigest: this.s.payloadDigest,
        reason: r,
        ...(code ? { code } : {}),
      }),
    );
  }

  private mustBeDecidableBy(by: Actor, at: Date): void {
    if (by.kind !== 'person' || !by.roles?.includes('admin')) throw new ChangeDecisionForbiddenError();
    if (this.s.status === 'pending' && at.getTime() >= this.s.expiresAt.getTime())
      throw new ChangeNotPendingError(this.s.id, 'expired');
    if (this.s.status !== 'pending') throw new ChangeNotPendingError(this.s.id, this.s.status);
  }

  private envelope(actor: Actor, at: Date) {
    return { tenantId: this.s.tenantId, at, actor };
  }

  /** The status as of `at`: a pending change past its deadline reads as expired before anyone records it. */
  statusAt(at: Date): ChangeStatus {
    return this.s.status === 'pending' && at.getTime() >= this.s.expiresAt.getTime() ? 'expired' : this.s.status;
  }

  snapshot(): Readonly<PendingChangeState> {
    return this.s;
  }
}
