import { AggregateRoot } from '../shared/aggregate-root';
import {
  Actor,
  Channel,
  Principal,
  POLICY_ACTOR,
  SYSTEM_ACTOR,
  hasAnyRole,
  isAgent,
  personActor,
} from '../shared/actor';
import { DomainError, ValidationError } from '../shared/domain-error';
import { jsonEqual } from '../shared/json';
import { grantWithin, narrowerGrantLimit } from '../policy/grant-limit';
import type { GrantScope, PolicyVerdict, ProposedCallFacts, ToolFlags } from '../policy/approval-policy';
import { widestGrantFor } from '../grant/grant.aggregate';
import {
  AlreadyCompletedError,
  AlreadyDecidedError,
  AlreadyExecutedError,
  ConversationBlockedError,
  GrantNotAllowedError,
  HaltedError,
  IdempotencyMismatchError,
  NotAllowedToDecideError,
  QuorumArgumentsMismatchError,
  SelfApprovalError,
  NotApprovedError,
  NotExecutedError,
  ToolCallNotFoundError,
} from './conversation.errors';
import {
  ApprovalRequested,
  ConversationStarted,
  DecisionRefused,
  GrantRefused,
  ToolCallApprovalRecorded,
  ToolCallApproved,
  ToolCallDeadlineExtended,
  ToolCallEscalated,
  ToolCallReminded,
  ToolCallAutoApproved,
  ToolCallNotified,
  ToolCallCancelled,
  ToolCallCompleted,
  ToolCallExecuted,
  ToolCallExpired,
  ToolCallProposed,
  ToolCallRejected,
} from './events';
import { ActorRef, DecisionKind, FollowUpState, ToolCall, ToolCallDisplay, ToolCallState } from './tool-call.entity';
import { MAX_TIMEOUT_SECONDS } from '../policy/policy-document';

export interface ConversationUser {
  id: string;
  roles: string[];
  name?: string;
}

export type ConversationStatus = 'active' | 'blocked';

export interface ConversationState {
  id: string;
  tenantId: string;
  agentId: string;
  /** The person answerable for the agent (its token's `owner`), when it named one: separation of duties keeps them from approving. */
  agentOwner?: string;
  user: ConversationUser | null;
  title?: string;
  metadata?: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
  version: number;
  toolCalls: ToolCallState[];
}

export interface ProposedCall {
  externalId?: string;
  toolName: string;
  arguments: Record<string, unknown>;
  annotations?: ToolFlags;
  reason?: string;
  confidence?: number;
  estimatedCost?: number;
  display?: ToolCallDisplay;
}

export interface ProposalResult {
  calls: ToolCall[];
  /** True when every call repeated an earlier one: nothing new was recorded. */
  replay: boolean;
}

export interface DecisionInput {
  decision: DecisionKind;
  reason?: string;
  arguments?: Record<string, unknown>;
  /** always_allow only: where the standing grant applies (default `conversation`). */
  scope?: GrantScope;
}

/** Who decides, and through which channel. */
export interface Decider extends Principal {
  via: ActorRef['via'];
}

/** What a successful always_allow asks the caller to create in the same unit of work. */
export interface GrantRequest {
  toolName: string;
  scope: GrantScope;
}

export type DecisionResult =
  | { kind: 'decided'; call: ToolCall; grant?: GrantRequest }
  | { kind: 'unchanged'; call: ToolCall }
  /** A refusal that still changed state (the call expired on the way): save first, then report. */
  | { kind: 'refused'; call: ToolCall; error: DomainError };

export type ClaimResult = { kind: 'claimed'; call: ToolCall } | { kind: 'refused'; call: ToolCall; error: DomainError };

export interface HaltInForce {
  scope: string;
  reason: string;
}

/** Who started a conversation and for whom: all that decides who may read it. */
export interface ConversationParties {
  agentId: string;
  userId: string | null;
}

/**
 * Who may read a conversation and its calls: its agent (an agent token reads nothing else), its requester,
 * and the tenant's approvers, admins and auditors. REST reads and the event stream both ask this.
 */
export function mayReadConversation(p: Principal, parties: ConversationParties): boolean {
  if (isAgent(p)) return p.id === parties.agentId;
  if (parties.userId !== null && parties.userId === p.id) return true;
  return hasAnyRole(p, ['approver', 'admin', 'auditor']);
}

/**
 * The aggregate root: one agent's conversation and every tool call proposed in it.
 * It owns the rules that span calls — blocking while approvals are pending, idempotent
 * proposals, first decision wins — and records one event per transition.
 */
export class Conversation extends AggregateRoot {
  private readonly calls: ToolCall[];
  private readonly added = new Set<string>();
  private readonly changed = new Set<string>();

  private constructor(
    private readonly s: Omit<ConversationState, 'toolCalls' | 'version'>,
    version: number,
    calls: ToolCall[],
    /** Only some calls were loaded (those a command's rules look at): enough for the rules, not for listing them. */
    private readonly partial = false,
  ) {
    super(s.tenantId, version);
    this.calls = calls;
  }

  static start(input: {
    id: string;
    tenantId: string;
    agentId: string;
    agentName?: string;
    agentOwner?: string;
    /** The channel the agent started it through (default `api`). */
    agentVia?: Channel;
    user?: ConversationUser | null;
    title?: string;
    metadata?: Record<string, unknown>;
    at: Date;
  }): Conversation {
    const c = new Conversation(
      {
        id: input.id,
        tenantId: input.tenantId,
        agentId: input.agentId,
        ...(input.agentOwner ? { agentOwner: input.agentOwner } : {}),
        user: input.user ?? null,
        title: input.title,
        metadata: input.metadata,
        createdAt: input.at,
        updatedAt: input.at,
      },
      0,
      [],
    );
    c.record(
      new ConversationStarted(
        {
          tenantId: input.tenantId,
          at: input.at,
          actor: agentActor(input.agentId, input.agentName, input.agentVia),
          conversationId: input.id,
        },
        { agentId: input.agentId, user: input.user ?? null, title: input.title },
      ),
    );
    return c;
  }

  /**
   * `partial`: `toolCalls` holds the calls the command's rules look at — every pending call (blocking, expiry),
   * every approved one for a halt, and those found by id or external id — not the whole history.
   */
  static rehydrate(state: ConversationState, opts: { partial?: boolean } = {}): Conversation {
    const { toolCalls, version, ...rest } = state;
    return new Conversation(
      rest,
      version,
      toolCalls.map((t) => ToolCall.rehydrate(t)),
      !!opts.partial,
    );
  }

  get id(): string {
    return this.s.id;
  }
  get agentId(): string {
    return this.s.agentId;
  }
  get agentOwner(): string | undefined {
    return this.s.agentOwner;
  }
  get user(): ConversationUser | null {
    return this.s.user;
  }
  get title(): string | undefined {
    return this.s.title;
  }
  get metadata(): Record<string, unknown> | undefined {
    return this.s.metadata;
  }
  get createdAt(): Date {
    return this.s.createdAt;
  }
  get updatedAt(): Date {
    return this.s.updatedAt;
  }
  get toolCalls(): readonly ToolCall[] {
    if (this.partial)
      throw new Error('This conversation was loaded with some of its calls only: load it whole to list its calls');
    return this.calls;
  }
  get isPartial(): boolean {
    return this.partial;
  }
  /** The calls waiting for a person: one step's (a new proposal waits for them). Loaded even when partial. */
  pendingCalls(): ToolCall[] {
    return this.calls.filter((c) => c.status === 'pending');
  }
  get pendingCount(): number {
    return this.calls.filter((c) => c.status === 'pending').length;
  }
  get status(): ConversationStatus {
    return this.pendingCount > 0 ? 'blocked' : 'active';
  }
  /** The calls to insert and to update since the last save (a watched list); clears it. */
  pullChangedCalls(): { added: ToolCall[]; changed: ToolCall[] } {
    const added = this.calls.filter((c) => this.added.has(c.id));
    const changed = this.calls.filter((c) => this.changed.has(c.id) && !this.added.has(c.id));
    this.added.clear();
    this.changed.clear();
    return { added, changed };
  }

  /** Same agent asking again with the same id is a replay; anything else is a clash. */
  isSameStart(agentId: string): boolean {
    return this.s.agentId === agentId;
  }

  findCall(id: string): ToolCall | undefined {
    return this.calls.find((c) => c.id === id);
  }

  /** Who may see this conversation: its agent, its requester, and the tenant's approvers, admins and auditors. */
  isVisibleTo(p: Principal): boolean {
    return mayReadConversation(p, { agentId: this.s.agentId, userId: this.s.user?.id ?? null });
  }

  /**
   * Roles meet the call's approvers, or the caller is the requester and `requester` is listed. Never an agent.
   * A call the policy settled at once has no approvers: any person may try, and learns it is already decided.
   */
  mayDecide(p: Principal, call: ToolCall): boolean {
    if (isAgent(p)) return false;
    if (!call.approval) return true;
    const approvers = call.approval.approvers;
    // `requester` names the conversation's user, never a role a token could claim. Auditors change nothing,
    // even where a policy stored before that was checked lists them.
    if (
      hasAnyRole(
        p,
        approvers.filter((a) => !NEVER_DECIDE.includes(a)),
      )
    )
      return true;
    return approvers.includes('requester') && !!this.s.user && this.s.user.id === p.id;
  }

  /**
   * Proposes one step's calls. Each is judged by `evaluate` (the ApprovalPolicy bound to this
   * tenant's policy, registry and grants) and is approved, rejected or left pending at once.
   */
  propose(
    step: ProposedCall[],
    evaluate: (call: ProposedCallFacts) => PolicyVerdict,
    newId: () => string,
    at: Date,
    halt: HaltInForce | null,
    /** The proposing agent's display name, for the audit record. */
    agentName?: string,
    /** The channel it proposes through (default `api`), for the audit record. */
    agentVia?: Channel,
  ): ProposalResult {
    const seen = new Set<string>();
    const repeats = new Map<number, ToolCall>();
    step.forEach((p, i) => {
      if (p.externalId === undefined) return;
      if (seen.has(p.externalId))
        throw new ValidationError([
          { path: `toolCalls[${i}].id`, message: `duplicate id ${p.externalId} in one step` },
        ]);
      seen.add(p.externalId);
      const earlier = this.calls.find((c) => c.externalId === p.externalId);
      if (!earlier) return;
      if (earlier.toolName !== p.toolName || !jsonEqual(earlier.arguments, p.arguments)) {
        throw new IdempotencyMismatchError(
          `Tool call id ${p.externalId} was already proposed in this conversation with different content`,
        );
      }
      repeats.set(i, earlier);
    });
    if (repeats.size === step.length) return { calls: [...repeats.values()], replay: true };

    if (halt) throw new HaltedError(halt.scope, halt.reason);
    this.expireDue(at); // a call past its expiresAt no longer blocks, even before the sweeper passes
    const pending = this.calls.filter((c) => c.status === 'pending').map((c) => c.id);
    if (pending.length > 0) throw new ConversationBlockedError(pending);

    const calls = step.map(
      (p, i) => repeats.get(i) ?? this.proposeOne(p, evaluate(p), newId(), at, agentName, agentVia),
    );
    this.touch(at);
    return { calls, replay: false };
  }

  private proposeOne(
    p: ProposedCall,
    verdict: PolicyVerdict,
    id: string,
    at: Date,
    agentName?: string,
    agentVia?: Channel,
  ): ToolCall {
    const policy = {
      level: verdict.level,
      rule: verdict.rule,
      policyVersion: verdict.policyVersion,
      reason: verdict.reason,
      grantId: verdict.grantId,
      toolFlags: verdict.toolFlags,
      // Kept for the decision only when the policy narrows it (absent: no narrowing, as on calls stored before).
      ...(isHeld(verdict.level) && verdict.grants !== 'tenant' ? { grants: verdict.grants } : {}),
      ...(isHeld(verdict.level) && verdict.selfApproval === false ? { selfApproval: false as const } : {}),
      ...(isHeld(verdict.level) && verdict.quorum ? { quorum: verdict.quorum } : {}),
      ...(isHeld(verdict.level) && verdict.escalate ? { escalate: verdict.escalate } : {}),
      ...(isHeld(verdict.level) && verdict.remindBefore ? { remindBefore: verdict.remindBefore } : {}),
    };
    const call = ToolCall.create({
      id,
      externalId: p.externalId,
      conversationId: this.s.id,
      toolName: p.toolName,
      arguments: p.arguments,
      annotations: p.annotations,
      reason: p.reason,
      confidence: p.confidence,
      estimatedCost: p.estimatedCost,
      display: p.display,
      status: 'pending',
      policy,
      createdAt: at,
      updatedAt: at,
    });
    this.calls.push(call);
    this.added.add(id);
    const env = this.envelope(call, at, agentActor(this.s.agentId, agentName, agentVia));
    this.record(
      new ToolCallProposed(env, {
        externalId: p.externalId,
        arguments: p.arguments,
        reason: p.reason,
        confidence: p.confidence,
        estimatedCost: p.estimatedCost,
        ...(verdict.toolFlags ? { toolFlags: verdict.toolFlags } : {}),
        policy: { level: policy.level, rule: policy.rule, policyVersion: policy.policyVersion, reason: policy.reason },
      }),
    );

    const byPolicy = { id: POLICY_ACTOR.id, via: POLICY_ACTOR.via };
    const policyEnv = this.envelope(call, at, POLICY_ACTOR);
    switch (verdict.level) {
      case 'automatic':
      case 'notify':
        call.moveTo('approved', at, { decision: { outcome: 'approved', by: byPolicy, at, reason: verdict.reason } });
        this.record(
          new ToolCallAutoApproved(policyEnv, {
            outcome: 'approved',
            via: 'policy',
            latencyMs: 0,
            ...pick(policy),
            grantId: verdict.grantId,
          }),
        );
        // The record that people were told: the channels deliver it (at least once) from the outbox.
        if (verdict.level === 'notify') {
          this.record(
            new ToolCallNotified(policyEnv, {
              ...policyRef(policy),
              approvers: [...verdict.approvers],
              requester: this.s.user?.id ?? null,
              channels: ['slack', 'webhook', 'inbox'],
            }),
          );
        }
        break;
      case 'deny':
        call.moveTo('rejected', at, { decision: { outcome: 'rejected', by: byPolicy, at, reason: verdict.reason } });
        this.record(
          new ToolCallRejected(policyEnv, {
            outcome: 'rejected',
            rejectedBy: 'policy',
            via: 'policy',
            latencyMs: 0,
            reason: verdict.reason,
            ...policyRef(policy),
          }),
        );
        break;
      case 'confirm':
      case 'manual': {
        const expiresAt = new Date(at.getTime() + verdict.timeoutSeconds * 1000);
        call.awaitApproval([...verdict.approvers], expiresAt);
        if (policy.escalate || policy.remindBefore)
          call.setFollowUp(withNextStep(call, { escalated: 0, reminded: [] }));
        this.record(
          new ApprovalRequested(policyEnv, {
            ...pick(policy),
            approvers: [...verdict.approvers],
            expiresAt: expiresAt.toISOString(),
          }),
        );
        break;
      }
    }
    return call;
  }

  /**
   * A person's decision. The first one wins; the same request again by the same person changes nothing.
   * An always_allow wider than the person may grant is refused (403) and recorded; the call stays as it was.
   */
  decide(toolCallId: string, input: DecisionInput, by: Decider, at: Date): DecisionResult {
    const call = this.mustFind(toolCallId);
    if (isAgent(by))
      throw new NotAllowedToDecideError('Agent tokens cannot decide tool calls: approval comes from people');
    if (!this.mayDecide(by, call)) {
      throw new NotAllowedToDecideError(
        `Deciding this call needs one of: ${(call.approval?.approvers ?? []).join(', ')}`,
      );
    }
    const actor = personActor(by, by.via);
    const env = this.envelope(call, at, actor);
    const scope = input.decision === 'always_allow' ? (input.scope ?? 'conversation') : undefined;
    if (scope) {
      const refusal = this.grantRefusal(call, scope, by);
      if (refusal) {
        this.record(
          new GrantRefused(env, {
            decision: 'always_allow',
            ...refusal,
            refusedBy: by.id,
            via: by.via,
            ...policyRef(call.policy),
          }),
        );
        return {
          kind: 'refused',
          call,
          error: new GrantNotAllowedError(refusal.reason, refusal.requestedScope, refusal.allowedScope),
        };
      }
    }
    if (call.isExpiredAt(at)) this.expireCall(call, at);
    if (call.status !== 'pending') {
      const d = call.decision;
      if (d && d.by.id === by.id && sameRequest(d, input, scope)) return { kind: 'unchanged', call };
      // A quorum member repeating the approval that counted (not the last one) changes nothing either.
      const mine = call.approvals.find((a) => a.by.id === by.id);
      if (mine && input.decision !== 'reject' && sameApproval(mine, input)) return { kind: 'unchanged', call };
      return { kind: 'refused', call, error: new AlreadyDecidedError(call.id, publicDecision(d), call.status) };
    }
    if (input.decision !== 'reject' && call.policy.selfApproval === false) {
      const self =
        this.s.user?.id === by.id
          ? "the conversation's user"
          : this.s.agentOwner === by.id
            ? "the agent's owner"
            : undefined;
      if (self) {
        const reason = `Separation of duties: ${self} may not approve this call; another approver must decide`;
        this.record(
          new DecisionRefused(env, {
            decision: input.decision,
            code: 'self_approval',
            refusedBy: by.id,
            via: by.via,
            reason,
            ...policyRef(call.policy),
          }),
        );
        return { kind: 'refused', call, error: new SelfApprovalError(reason) };
      }
    }

    const ref: ActorRef = { id: by.id, via: by.via, ...(by.name ? { name: by.name } : {}) };
    const latencyMs = at.getTime() - call.createdAt.getTime();
    if (input.decision === 'reject') {
      call.moveTo('rejected', at, {
        decision: { outcome: 'rejected', by: ref, at, kind: 'reject', reason: input.reason },
      });
      this.record(
        new ToolCallRejected(env, {
          outcome: 'rejected',
          rejectedBy: by.id,
          via: by.via,
          latencyMs,
          reason: input.reason,
          ...policyRef(call.policy),
        }),
      );
      this.markChanged(call, at);
      return { kind: 'decided', call };
    }

    const quorum = call.policy.quorum;
    if (quorum) {
      const counted = this.countTowardsQuorum(call, input, by, at, env);
      if (counted) return counted;
    }

    // A manual call is approved but never turned into a standing grant; nor is a quorum's (one person's
    // standing approval may not stand in for several).
    const grant = scope && call.policy.level !== 'manual' && !quorum ? { toolName: call.toolName, scope } : undefined;
    const editedArguments = quorum ? (call.approvals[0]?.editedArguments ?? input.arguments) : input.arguments;
    if (quorum)
      call.recordApproval(
        {
          by: ref,
          at,
          kind: input.decision,
          ...(input.reason !== undefined ? { reason: input.reason } : {}),
          ...(editedArguments ? { editedArguments } : {}),
        },
        at,
      );
    call.moveTo('approved', at, {
      decision: {
        outcome: 'approved',
        by: ref,
        at,
        kind: input.decision,
        reason: input.reason,
        editedArguments,
        ...(scope ? { grantScope: scope } : {}),
      },
    });
    this.record(
      new ToolCallApproved(env, {
        outcome: 'approved',
        approvedBy: by.id,
        via: by.via,
        latencyMs,
        decision: input.decision,
        reason: input.reason,
        editedArguments,
        ...(quorum ? { approvals: call.approvals.map((a) => a.by.id) } : {}),
        ...policyRef(call.policy),
      }),
    );
    this.markChanged(call, at);
    return { kind: 'decided', call, grant };
  }

  /**
   * An approval of a call that needs a quorum: refused when the person's roles do not count, or when it
   * approves other arguments than the first approval did; recorded (the call stays pending) while fewer
   * than the quorum have approved. Undefined when this approval completes the quorum: the caller approves.
   */
  private countTowardsQuorum(
    call: ToolCall,
    input: DecisionInput,
    by: Decider,
    at: Date,
    env: ReturnType<Conversation['envelope']>,
  ): DecisionResult | undefined {
    const quorum = call.policy.quorum!;
    if (quorum.of && !hasAnyRole(by, quorum.of)) {
      throw new NotAllowedToDecideError(
        `Approvals of this call count only from: ${quorum.of.join(', ')} (a quorum of ${quorum.count}); you may reject it`,
      );
    }
    const earlier = call.approvals;
    const mine = earlier.find((a) => a.by.id === by.id);
    if (mine) {
      if (sameApproval(mine, input)) return { kind: 'unchanged', call };
      return {
        kind: 'refused',
        call,
        error: new AlreadyDecidedError(
          call.id,
          { outcome: 'approval_recorded', by: mine.by, at: mine.at.toISOString() },
          call.status,
        ),
      };
    }
    const fixed = earlier[0];
    if (
      fixed &&
      input.arguments !== undefined &&
      !jsonEqual(input.arguments, fixed.editedArguments ?? call.arguments)
    ) {
      return { kind: 'refused', call, error: new QuorumArgumentsMismatchError(call.id) };
    }
    const count = earlier.length + 1;
    if (count >= quorum.count) return undefined;
    const editedArguments = fixed ? fixed.editedArguments : input.arguments;
    const ref: ActorRef = { id: by.id, via: by.via, ...(by.name ? { name: by.name } : {}) };
    call.recordApproval(
      {
        by: ref,
        at,
        kind: input.decision as 'approve' | 'always_allow',
        ...(input.reason !== undefined ? { reason: input.reason } : {}),
        ...(editedArguments ? { editedArguments } : {}),
      },
      at,
    );
    this.record(
      new ToolCallApprovalRecorded(env, {
        approvedBy: by.id,
        via: by.via,
        decision: input.decision as 'approve' | 'always_allow',
        count,
        needed: quorum.count,
        reason: input.reason,
        editedArguments: input.arguments,
        ...policyRef(call.policy),
      }),
    );
    this.markChanged(call, at);
    return { kind: 'decided', call };
  }

  /** Why `by` may not make a standing grant in `scope` for this call, or undefined when they may. */
  private grantRefusal(
    call: ToolCall,
    scope: GrantScope,
    by: Decider,
  ): { requestedScope: string; allowedScope: string; reason: string } | undefined {
    const byRoles = widestGrantFor(by);
    const byPolicy = call.policy.grants ?? 'tenant';
    const allowed = narrowerGrantLimit(byRoles, byPolicy);
    if (grantWithin(scope, allowed)) return undefined;
    const rule = call.policy.rule === null ? 'the policy defaults' : `policy rule ${call.policy.rule}`;
    // Name the bound that even an admin would meet first: the policy's, then the roles'.
    const reason =
      byPolicy === 'none'
        ? `No standing grant may be made for this call (${rule}: grants none); approve it instead`
        : !grantWithin(scope, byPolicy)
          ? `A standing grant for this call may cover at most scope ${byPolicy} (${rule}), not ${scope}`
          : `Only an admin may make a standing grant in scope ${scope}; you may grant at most scope ${allowed}`;
    return { requestedScope: scope, allowedScope: allowed, reason };
  }

  /** The agent claims the run of an approved call, exactly once. */
  claim(toolCallId: string, agent: Principal, at: Date, halt: HaltInForce | null): ClaimResult {
    const call = this.mustFind(toolCallId);
    if (call.isExpiredAt(at)) this.expireCall(call, at);
    if (halt) throw new HaltedError(halt.scope, halt.reason);
    if (call.status === 'executed' || call.status === 'completed')
      return { kind: 'refused', call, error: new AlreadyExecutedError(call.id, call.status) };
    if (call.status !== 'approved') return { kind: 'refused', call, error: new NotApprovedError(call.id, call.status) };
    const by: ActorRef = { id: agent.id, via: agent.via ?? 'api', ...(agent.name ? { name: agent.name } : {}) };
    call.moveTo('executed', at, { execution: { at, by } });
    this.record(
      new ToolCallExecuted(this.envelope(call, at, agentActor(agent.id, agent.name, agent.via)), {
        arguments: call.argumentsToRun,
        edited: !!call.decision?.editedArguments,
        approvedBy: call.decision?.by.id ?? 'policy',
        approvedVia: call.decision?.by.via ?? 'policy',
        ...policyRef(call.policy),
      }),
    );
    this.markChanged(call, at);
    return { kind: 'claimed', call };
  }

  /** The agent reports how the run went. */
  complete(
    toolCallId: string,
    result: { outcome: 'succeeded' | 'failed'; output?: unknown; error?: string },
    agent: Principal,
    at: Date,
  ): ToolCall {
    const call = this.mustFind(toolCallId);
    if (call.status === 'completed') throw new AlreadyCompletedError(call.id);
    if (call.status !== 'executed') throw new NotExecutedError(call.id, call.status);
    call.moveTo('completed', at, { result: { ...result, at } });
    const startedAt = call.snapshot().execution?.at ?? at;
    this.record(
      new ToolCallCompleted(this.envelope(call, at, agentActor(agent.id, agent.name, agent.via)), {
        outcome: result.outcome,
        error: result.error,
        durationMs: at.getTime() - startedAt.getTime(),
      }),
    );
    this.markChanged(call, at);
    return call;
  }

  /** Expires every pending call whose time is up. Returns the calls it expired. */
  expireDue(at: Date): ToolCall[] {
    const due = this.calls.filter((c) => c.isExpiredAt(at));
    due.forEach((c) => this.expireCall(c, at));
    return due;
  }

  /**
   * The escalation steps and reminders due by `at` on pending calls (the sweeper calls this after `expireDue`).
   * An escalation widens who may decide and is recorded with the channels to tell; of several reminders due at
   * once (the sweeper was away), only the latest is recorded. Returns the calls it moved on.
   */
  followUpDue(at: Date): ToolCall[] {
    const moved: ToolCall[] = [];
    for (const call of this.calls) {
      const f = call.snapshot().followUp;
      if (call.status !== 'pending' || !f?.nextAt || f.nextAt.getTime() > at.getTime() || call.isExpiredAt(at))
        continue;
      const s = call.snapshot();
      const steps = s.policy.escalate ?? [];
      let approvers = [...(s.approval?.approvers ?? [])];
      let escalated = f.escalated;
      const env = this.envelope(call, at, SYSTEM_ACTOR);
      while (escalated < steps.length && s.createdAt.getTime() + steps[escalated].after * 1000 <= at.getTime()) {
        const step = steps[escalated];
        const added = (step.approvers ?? []).filter((a) => !approvers.includes(a));
        approvers = [...approvers, ...added];
        escalated += 1;
        this.record(
          new ToolCallEscalated(env, {
            step: escalated,
            of: steps.length,
            afterSeconds: step.after,
            added,
            approvers,
            notify: step.notify ?? [],
            expiresAt: s.approval!.expiresAt.toISOString(),
            ...policyRef(s.policy),
          }),
        );
      }
      const expiresAt = s.approval!.expiresAt;
      const due = (s.policy.remindBefore ?? []).filter(
        (b) => !f.reminded.includes(b) && reminderAt(s, b) !== undefined && reminderAt(s, b)!.getTime() <= at.getTime(),
      );
      if (due.length > 0) {
        const latest = Math.min(...due);
        this.record(
          new ToolCallReminded(env, {
            remindBefore: latest,
            secondsLeft: Math.max(0, Math.round((expiresAt.getTime() - at.getTime()) / 1000)),
            expiresAt: expiresAt.toISOString(),
            approvers,
            ...policyRef(s.policy),
          }),
        );
      }
      call.setFollowUp(withNextStep(call, { escalated, reminded: [...f.reminded, ...due] }), { approvers, expiresAt });
      this.markChanged(call, at);
      moved.push(call);
    }
    return moved;
  }

  /**
   * An admin gives a pending call more time: its deadline moves to `expiresAt` (later than now and the current
   * deadline, at most a day from now), its reminders start over for the new deadline, and it is recorded.
   */
  extendDeadline(
    toolCallId: string,
    expiresAt: Date,
    reason: string | undefined,
    by: Decider,
    at: Date,
  ): DecisionResult {
    const call = this.mustFind(toolCallId);
    if (isAgent(by) || !hasAnyRole(by, ['admin']))
      throw new NotAllowedToDecideError('Only an admin may extend the deadline of a tool call');
    if (call.isExpiredAt(at)) this.expireCall(call, at);
    if (call.status !== 'pending' || !call.approval)
      return {
        kind: 'refused',
        call,
        error: new AlreadyDecidedError(call.id, publicDecision(call.decision), call.status),
      };
    const from = call.approval.expiresAt;
    if (expiresAt.getTime() <= from.getTime() || expiresAt.getTime() > at.getTime() + MAX_TIMEOUT_SECONDS * 1000) {
      throw new ValidationError([
        {
          path: 'expiresAt',
          message: `must be later than the current deadline (${from.toISOString()}) and at most ${MAX_TIMEOUT_SECONDS} seconds from now`,
        },
      ]);
    }
    const approval = { approvers: call.approval.approvers, expiresAt };
    const f = call.snapshot().followUp;
    call.setFollowUp(undefined, approval);
    if (f) call.setFollowUp(withNextStep(call, { escalated: f.escalated, reminded: [] }), approval);
    this.record(
      new ToolCallDeadlineExtended(this.envelope(call, at, personActor(by, by.via)), {
        from: from.toISOString(),
        to: expiresAt.toISOString(),
        by: by.id,
        via: by.via,
        ...(reason ? { reason } : {}),
        ...policyRef(call.policy),
      }),
    );
    this.markChanged(call, at);
    return { kind: 'decided', call };
  }

  /** Kill switch: pending and approved-but-unclaimed calls are cancelled and never run. */
  cancelOpen(reason: string, by: Actor, at: Date): ToolCall[] {
    const open = this.calls.filter((c) => c.status === 'pending' || c.status === 'approved');
    for (const call of open) {
      const previousStatus = call.status;
      call.moveTo('cancelled', at, {
        cancellation: { by: { id: by.id, via: by.via, ...(by.name ? { name: by.name } : {}) }, at, reason },
        // An approval already given stays in `decision`; a pending call gets a cancellation outcome.
        ...(previousStatus === 'pending'
          ? { decision: { outcome: 'cancelled' as const, by: { id: by.id, via: by.via }, at, reason } }
          : {}),
      });
      this.record(
        new ToolCallCancelled(this.envelope(call, at, by), {
          outcome: 'cancelled',
          reason,
          previousStatus,
          ...policyRef(call.policy),
        }),
      );
      this.markChanged(call, at);
    }
    return open;
  }

  private expireCall(call: ToolCall, at: Date): void {
    const expiresAt = call.approval!.expiresAt;
    call.moveTo('expired', at, {
      decision: { outcome: 'expired', by: { id: SYSTEM_ACTOR.id, via: SYSTEM_ACTOR.via }, at },
    });
    const waitedMs = at.getTime() - call.createdAt.getTime();
    this.record(
      new ToolCallExpired(this.envelope(call, at, SYSTEM_ACTOR), {
        outcome: 'expired',
        reason: `No decision before ${expiresAt.toISOString()}`,
        expiresAt: expiresAt.toISOString(),
        waitedMs,
        latencyMs: waitedMs,
        ...policyRef(call.policy),
      }),
    );
    this.markChanged(call, at);
  }

  private mustFind(id: string): ToolCall {
    const call = this.findCall(id);
    if (!call) throw new ToolCallNotFoundError(id);
    return call;
  }

  private markChanged(call: ToolCall, at: Date): void {
    this.changed.add(call.id);
    this.touch(at);
  }

  private touch(at: Date): void {
    if (at > this.s.updatedAt) this.s.updatedAt = at;
  }

  private envelope(call: ToolCall, at: Date, actor: Actor) {
    return {
      tenantId: this.tenantId,
      at,
      actor,
      conversationId: this.s.id,
      toolCallId: call.id,
      toolName: call.toolName,
    };
  }
}

/** Listed in a stored policy's approvers, these still never decide (new policies cannot list them). */
const NEVER_DECIDE: readonly string[] = ['requester', 'auditor', 'agent'];

function isHeld(level: string): boolean {
  return level === 'confirm' || level === 'manual';
}

/**
 * Whether a repeated decision asks for what was recorded: the same kind, the same edited arguments
 * (structurally, key order aside) and, for always_allow, the same scope. Anything else is a second decision.
 */
function sameRequest(
  d: NonNullable<ToolCallState['decision']>,
  input: DecisionInput,
  scope: GrantScope | undefined,
): boolean {
  if (d.kind !== input.decision) return false;
  if (input.decision !== 'reject' && !jsonEqual(d.editedArguments, input.arguments)) return false;
  // A decision recorded before its scope was kept reads as the default scope.
  return scope === undefined || (d.grantScope ?? 'conversation') === scope;
}

/** When the reminder `before` seconds ahead of the deadline falls; undefined when it would fall before the call was made. */
function reminderAt(s: Readonly<ToolCallState>, before: number): Date | undefined {
  const t = s.approval!.expiresAt.getTime() - before * 1000;
  return t > s.createdAt.getTime() ? new Date(t) : undefined;
}

/** The follow-up state with `nextAt`: the earliest escalation or reminder not yet taken (none: absent). */
function withNextStep(call: ToolCall, f: Omit<FollowUpState, 'nextAt'>): FollowUpState {
  const s = call.snapshot();
  const times: number[] = [];
  const steps = s.policy.escalate ?? [];
  if (f.escalated < steps.length) times.push(s.createdAt.getTime() + steps[f.escalated].after * 1000);
  for (const b of s.policy.remindBefore ?? []) {
    const t = reminderAt(s, b);
    if (t && !f.reminded.includes(b)) times.push(t.getTime());
  }
  const next = times.filter((t) => t < s.approval!.expiresAt.getTime());
  return {
    escalated: f.escalated,
    reminded: f.reminded,
    ...(next.length ? { nextAt: new Date(Math.min(...next)) } : {}),
  };
}

/** A quorum member's repeated approval: the same kind and the same arguments (none given approves the fixed ones). */
function sameApproval(a: { kind: string; editedArguments?: Record<string, unknown> }, input: DecisionInput): boolean {
  return a.kind === input.decision && (input.arguments === undefined || jsonEqual(a.editedArguments, input.arguments));
}

function agentActor(id: string, name?: string, via: Channel = 'api'): Actor {
  return { id, kind: 'agent', via, roles: ['agent'], ...(name ? { name } : {}) };
}

function pick(p: { level: string; rule: number | null; policyVersion: number; reason: string }) {
  return { ...policyRef(p), reason: p.reason };
}

/** Which policy version and rule decided a call: carried by every decision event. */
function policyRef(p: { level: string; rule: number | null; policyVersion: number }) {
  return { level: p.level, rule: p.rule, policyVersion: p.policyVersion };
}

/** The standing decision as the contract shows it (the internal `kind` and `grantScope` kept out). */
export function publicDecision(d: ToolCallState['decision']): Record<string, unknown> | undefined {
  if (!d) return undefined;
  const { kind: _kind, grantScope: _grantScope, ...rest } = d;
  return { ...rest, at: d.at.toISOString() };
}
