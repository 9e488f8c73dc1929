import { AggregateRoot } from '../shared/aggregate-root';
import { Actor, agentActor, Channel, Principal } from '../shared/actor';
import type { PolicyVerdict, ProposedCallFacts } from '../policy/approval-policy';
import { HaltedError, ToolCallNotFoundError } from './conversation.errors';
import { ConversationStarted } from './conversation.events';
import { ProposedCall, proposeCall } from './proposed-call';
import { cancelCall, ClaimResult, claimCall, completeCall } from './call-run';
import { CallCourse, decideCall, DecisionResult, expireCall, followUpCall } from './held-call';
import { extendDeadline } from './held-call-deadline';
import { ClaimKey, Decider, DecisionInput, ToolCall, ToolCallState } from './tool-call.entity';
import { repeatedCalls } from './rules/idempotent-proposal';
import { checkNotBlocked } from './rules/one-step-at-a-time';
import { approvalRefusal, authorityFor } from './rules/delegated-authority';
import { mayDecide } from './rules/who-may-decide';
import type { InterestedParties } from './rules/separation-of-duties';
import { mayReadConversation } from './rules/who-may-read';

export type { Decider, DecisionInput } from './tool-call.entity';
export type { DecisionResult, GrantRequest } from './held-call';
export type { ProposedCall } from './proposed-call';
export type { ClaimResult } from './call-run';
export { policyUser, type ConversationUser, type UserAssurance } from './conversation-user';
import type { ConversationUser } from './conversation-user';
export { mayReadCall, mayReadConversation, type ConversationParties } from './rules/who-may-read';

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

export interface ProposalResult {
  calls: ToolCall[];
  /** True when every call repeated an earlier one: nothing new was recorded. */
  replay: boolean;
}

export interface HaltInForce {
  scope: string;
  reason: string;
}

/**
 * The aggregate root: one agent's conversation and every tool call proposed in it.
 * It owns the rules that span calls — blocking while approvals are pending, idempotent
 * proposals, first decision wins — and records one event per transition. The rules
 * themselves are named, one a file, in `rules/`.
 */
export class Conversation extends AggregateRoot {
  /** The calls it was loaded with (see `rehydrate`) and those proposed since: enough for every rule. */
  private readonly calls: ToolCall[];
  private readonly added = new Set<string>();
  private readonly changed = new Set<string>();

  private constructor(
    private readonly s: Omit<ConversationState, 'toolCalls' | 'version'>,
    version: number,
    calls: ToolCall[],
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
    /** Without `assurance`, the agent's word (`asserted`). */
    user?: ConversationUser | null;
    title?: string;
    metadata?: Record<string, unknown>;
    at: Date;
  }): Conversation {
    const { id, tenantId, agentId, at } = input;
    const user = input.user ? { ...input.user, assurance: input.user.assurance ?? ('asserted' as const) } : null;
    const owner = input.agentOwner ? { agentOwner: input.agentOwner } : {};
    const c = new Conversation(
      {
        id,
        tenantId,
        agentId,
        ...owner,
        user,
        title: input.title,
        metadata: input.metadata,
        createdAt: at,
        updatedAt: at,
      },
      0,
      [],
    );
    const actor = agentActor(agentId, input.agentName, input.agentVia);
    c.record(
      new ConversationStarted({ tenantId, at, actor, conversationId: id }, { agentId, user, title: input.title }),
    );
    return c;
  }

  /**
   * `state.toolCalls` holds the calls it was loaded with: those its commands look at (every pending one for
   * blocking and expiry, approved ones for a halt, those named by id or external id), or all of them. The
   * aggregate lists none: reads that show a conversation's calls get them beside it (ConversationRepository).
   */
  static rehydrate(state: ConversationState): Conversation {
    const { toolCalls, version, ...rest } = state;
    return new Conversation(
      rest,
      version,
      toolCalls.map((t) => ToolCall.rehydrate(t)),
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
  /** The calls waiting for a person: one step's (a new proposal waits for them). Every load holds them. */
  pendingCalls(): ToolCall[] {
    return this.calls.filter((c) => c.status === 'pending');
  }
  get pendingCount(): number {
    return this.pendingCalls().length;
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
   * Whether `p` may decide `call` (rules/who-may-decide): with their own rights, or on behalf of one of
   * `delegators`, the people whose delegation to `p` holds now (rules/delegated-authority).
   */
  mayDecide(p: Principal, call: ToolCall, delegators: readonly Principal[] = []): boolean {
    const userId = this.s.user?.id;
    return mayDecide(p, call, userId) || delegators.some((d) => d.id !== p.id && mayDecide(d, call, userId));
  }

  /** Whether `p` makes this decision with their own rights: then no one's delegation to them needs looking up. */
  decidesByOwnRight(p: Principal, call: ToolCall, input: DecisionInput): boolean {
    return authorityFor(p, call, input, this.parties, [])?.kind === 'own';
  }

  /** Why an approval by `p` would be refused whatever passkey came with it (rules/delegated-authority). */
  approvalRefusal(p: Principal, call: ToolCall, delegators: readonly Principal[] = []): string | undefined {
    return approvalRefusal(p, call, this.parties, delegators);
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
    const repeats = repeatedCalls(step, (externalId) => this.calls.find((c) => c.externalId === externalId));
    if (repeats.size === step.length) return { calls: [...repeats.values()], replay: true };
    if (halt) throw new HaltedError(halt.scope, halt.reason);
    this.expireDue(at); // a call past its expiresAt no longer blocks, even before the sweeper passes
    checkNotBlocked(this.pendingCalls());
    const agent = agentActor(this.s.agentId, agentName, agentVia);
    const requester = this.s.user?.id ?? null;
    const calls = step.map((p, i) => {
      const repeated = repeats.get(i);
      if (repeated) return repeated;
      const verdict = evaluate(p);
      const origin = { id: newId(), conversationId: this.s.id, at, agent, requester };
      const proposed = proposeCall(p, verdict, origin, (c) => this.course(c));
      this.calls.push(proposed);
      this.added.add(proposed.id);
      return proposed;
    });
    this.touch(at);
    return { calls, replay: false };
  }

  /**
   * A person's decision on a held call (held-call.ts: which rules refuse, which throw, which are recorded);
   * `delegators`: the people whose delegation to `by` holds now, on whose behalf they may decide.
   */
  decide(
    toolCallId: string,
    input: DecisionInput,
    by: Decider,
    at: Date,
    delegators: readonly Principal[] = [],
  ): DecisionResult {
    const call = this.mustFind(toolCallId);
    return decideCall(call, input, by, at, this.course(call), delegators);
  }

  /** An admin gives a pending call more time (held-call-deadline.ts). */
  extendDeadline(
    toolCallId: string,
    expiresAt: Date,
    reason: string | undefined,
    by: Decider,
    at: Date,
  ): DecisionResult {
    const call = this.mustFind(toolCallId);
    return extendDeadline(call, expiresAt, reason, by, at, this.course(call));
  }

  /** Expires every pending call whose time is up. Returns the calls it expired. */
  expireDue(at: Date): ToolCall[] {
    const due = this.calls.filter((c) => c.isExpiredAt(at));
    due.forEach((c) => expireCall(c, at, this.course(c)));
    return due;
  }

  /**
   * The escalation steps and reminders due by `at` on pending calls (the sweeper calls this after `expireDue`).
   * Returns the calls it moved on.
   */
  followUpDue(at: Date): ToolCall[] {
    return this.calls.filter((c) => followUpCall(c, at, this.course(c)));
  }

  /** The agent claims the run of an approved call, exactly once (call-run.ts); never under a halt. */
  claim(toolCallId: string, agent: Principal, at: Date, halt: HaltInForce | null, key?: ClaimKey): ClaimResult {
    const call = this.mustFind(toolCallId);
    if (call.isExpiredAt(at)) expireCall(call, at, this.course(call));
    if (halt) throw new HaltedError(halt.scope, halt.reason);
    return claimCall(call, agent, at, this.course(call), key);
  }

  /** The agent reports how the run went (call-run.ts). */
  complete(
    toolCallId: string,
    result: { outcome: 'succeeded' | 'failed'; output?: unknown; error?: string },
    agent: Principal,
    at: Date,
    /** The same result again is taken as recorded (results sent with a proposal, which a retry sends again). */
    again = false,
  ): ToolCall {
    const call = this.mustFind(toolCallId);
    return completeCall(call, result, agent, at, this.course(call), again);
  }

  /** Kill switch: pending and approved-but-unclaimed calls are cancelled and never run (call-run.ts). */
  cancelOpen(reason: string, by: Actor, at: Date): ToolCall[] {
    const open = this.calls.filter((c) => c.status === 'pending' || c.status === 'approved');
    for (const call of open) cancelCall(call, reason, by, at, this.course(call));
    return open;
  }

  /** The people a call is for: separation of duties keeps them from approving it. */
  private get parties(): InterestedParties {
    return { userId: this.s.user?.id, agentOwner: this.s.agentOwner };
  }

  /** What a held call's course (held-call.ts) needs from its conversation. */
  private course(call: ToolCall): CallCourse {
    return {
      parties: this.parties,
      envelope: (actor, at) => this.envelope(call, at, actor),
      record: (event) => this.record(event),
      changed: (at) => this.markChanged(call, at),
    };
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
