import { Inject, Injectable } from '@nestjs/common';
import { governanceOf } from '../../../domain/governance/governance';
import { ChangeKind, PendingChange } from '../../../domain/governance/pending-change.aggregate';
import type { TenantPolicy } from '../../../domain/policy/tenant-policy.aggregate';
import type { Actor } from '../../../domain/shared/actor';
import { CLOCK, Clock, IDS, IdGenerator, POLICIES, PolicyRepository, RECEIPTS, ReceiptSigner } from '../../ports';
import { PENDING_CHANGES, PendingChangeRepository } from '../../ports/pending-change.port';
import { HeldForApproval, pendingChangeView } from '../../views/change.view';

export interface GovernedRequest {
  tenantId: string;
  by: Actor;
  kind: ChangeKind;
  summary: string;
  /** What the approved change will apply, as JSON (no secret: see `secret`). */
  payload: Record<string, unknown>;
  /** For policy changes: the version in force when it was proposed. */
  baseVersion?: number;
  /** A new webhook's signing secret, kept beside the change until it ends. */
  secret?: string;
}

/**
 * Four eyes on the control plane. Each governed command asks the gate first (inside its unit of work): with
 * `governance` in the policy in force and a person asking, the request becomes a PendingChange and the command
 * answers it instead of acting; otherwise (no governance, a system actor such as the policy file, or the
 * command applying an approved change) it acts as before.
 */
@Injectable()
export class GovernanceGate {
  constructor(
    @Inject(POLICIES) private readonly policies: PolicyRepository,
    @Inject(PENDING_CHANGES) private readonly changes: PendingChangeRepository,
    @Inject(IDS) private readonly ids: IdGenerator,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RECEIPTS) private readonly receipts: ReceiptSigner,
  ) {}

  /** The pending change the request became, or null when it may take effect now. Call inside a unit of work. */
  async hold(request: GovernedRequest, policy?: TenantPolicy): Promise<HeldForApproval | null> {
    if (request.by.kind !== 'person') return null;
    const inForce = policy ?? (await this.policies.current(request.tenantId));
    const governance = governanceOf(inForce.document);
    if (!governance) return null;
    const at = this.clock.now();
    const change = PendingChange.propose({
      tenantId: request.tenantId,
      id: this.ids.next('chg'),
      kind: request.kind,
      summary: request.summary,
      payload: request.payload,
      payloadDigest: this.receipts.digest(request.payload),
      baseVersion: request.baseVersion ?? null,
      by: request.by,
      at,
      quorum: governance.quorum,
    });
    await this.changes.save(change, request.secret);
    return { pendingChange: pendingChangeView(change, at) };
  }
}
