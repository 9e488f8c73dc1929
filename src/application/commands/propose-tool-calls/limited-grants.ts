import type { GrantFacts, PolicyVerdict } from '../../../domain/policy/approval-policy';
import type { ToolCall } from '../../../domain/conversation/tool-call.entity';
import type { Grant } from '../../../domain/grant/grant.aggregate';
import { agentActor, type Principal } from '../../../domain/shared/actor';
import type { GrantRepository } from '../../ports';

/** A limited grant was spent by another proposal meanwhile: the unit of work runs again from a fresh read. */
export class LimitedGrantSpentError extends Error {
  readonly code = '40001'; // retryable, as a lost race (see the unit of work)
}

/**
 * A proposal's standing grants and denies as the policy sees them, and the uses of limited grants (`uses`): each
 * call a limited grant lets through uses one, counted here while the step is judged (a grant with one use left lets
 * one call of the step through) and then in the store, atomically (`use`: UPDATE … WHERE uses_left >= n RETURNING in
 * the proposal's transaction). When the store finds fewer uses left than counted (another proposal spent them), the
 * unit runs again from a fresh read, where the spent grant is no longer among the grants.
 */
export class LimitedGrants {
  readonly denyFacts: GrantFacts[];
  private readonly allows: GrantFacts[];
  private readonly left = new Map<string, number>();
  private readonly initial = new Map<string, number>();
  private readonly byId = new Map<string, Grant>();

  /** `counting`: the store can count uses down; without it a limited grant is never applied (fail closed). */
  constructor(grants: readonly Grant[], counting: boolean) {
    this.denyFacts = grants.flatMap((g) => g.denyFacts() ?? []);
    const allows = grants.filter((g) => g.effect === 'allow');
    for (const g of allows) {
      const s = g.snapshot();
      if (s.usesLeft !== undefined) {
        this.left.set(g.id, counting ? s.usesLeft : 0);
        this.initial.set(g.id, counting ? s.usesLeft : 0);
        this.byId.set(g.id, g);
      }
    }
    this.allows = allows.map((g) => g.facts());
  }

  /** The grants the next call may use: a limited one with no use left in this step is left out. */
  grantFacts(): GrantFacts[] {
    return this.allows.filter((g) => (this.left.get(g.id) ?? 1) > 0);
  }

  /** A verdict made with `grantFacts()`: a limited grant that let the call through has one use fewer. */
  counted(verdict: PolicyVerdict): void {
    const id = verdict.grantId;
    if (id !== undefined && this.left.has(id)) this.left.set(id, this.left.get(id)! - 1);
  }

  /** Counts the step's uses off the store, one GrantUsed per call in the audit trail. */
  async use(store: GrantRepository, agent: Principal, calls: readonly ToolCall[], at: Date, conversationId: string) {
    for (const [id, grant] of this.byId) {
      const n = this.initial.get(id)! - this.left.get(id)!;
      if (n <= 0) continue;
      // The calls of this step it let through (a replayed call of an earlier step was counted then).
      const users = calls.filter((c) => c.policy.grantId === id && c.createdAt.getTime() === at.getTime()).slice(-n);
      const usesLeft = await store.use(grant.snapshot().tenantId, id, n);
      if (usesLeft === null) throw new LimitedGrantSpentError(`Standing grant ${id} was spent meanwhile`);
      grant.used(
        users.map((c) => c.id),
        usesLeft,
        agentActor(agent.id, agent.name, agent.via ?? 'api'),
        at,
        conversationId,
      );
      await store.save(grant);
    }
  }
}
