import type { Channel, OnBehalfOf, Principal } from '../shared/actor';
import type { StepUpEvidence, StepUpProof } from './step-up-proof';
import type { SupervisionLevel } from '../policy/supervision-level';
import type { GrantLimit, GrantScope, ShadowVerdict, ToolFlags } from '../policy/approval-policy';
import type { EscalationStep, NotifyChannel, PolicyQuorum, RuleDecision } from '../policy/policy-document';
import { IllegalTransitionError } from './conversation.errors';
import type { CallPreview } from './call-preview';
import { ToolCallStatus, canMove } from './tool-call-status';

export interface DisplayField {
  label: string;
  value: string;
}
export interface ToolCallDisplay {
  title?: string;
  summary?: string;
  fields?: DisplayField[];
}

export interface PolicyRecord {
  level: SupervisionLevel;
  rule: number | null;
  policyVersion: number;
  reason: string;
  grantId?: string;
  /** The widest standing grant an always_allow may make, when the policy narrows it (absent: `tenant`). */
  grants?: GrantLimit;
  /** The tool's flags the policy saw (registry first, else the proposal's annotations), when there were any. */
  toolFlags?: ToolFlags;
  /** Separation of duties: the conversation's user and the agent's owner may not approve (absent: they may). */
  selfApproval?: false;
  /** Distinct approvals the call needs, when more than one. */
  quorum?: PolicyQuorum;
  /** An approval relayed by an MCP chat client (`via: mcp`) may not decide the call (absent: it may, rules/chat-approval). */
  chatApproval?: false;
  /** `passkey`: an approval needs a fresh passkey assertion made for this call and its exact arguments (rules/step-up). */
  stepUp?: 'passkey';
  /** The deciding rule's escalation steps, kept with the call: a later policy does not change a call's course. */
  escalate?: EscalationStep[];
  remindBefore?: number[];
  /** The channels that reach out to people about this call, when its rule names them (absent: all). */
  notify?: NotifyChannel[];
  /** What a person may decide, when its rule narrows it (absent: anything their role allows). */
  allowedDecisions?: RuleDecision[];
  /** A rejection's reason is one of these, unless `rejectFreeText`. */
  rejectReasons?: string[];
  rejectFreeText?: true;
  /** What a rule in shadow mode would have decided (recorded, never applied). */
  shadow?: ShadowVerdict;
}

/** How far a held call's escalation and reminders have gone, and when the next step is due. */
export interface FollowUpState {
  /** Escalation steps taken (the first `escalated` of `policy.escalate`). */
  escalated: number;
  /** The `remindBefore` values already reminded of, for the current deadline. */
  reminded: number[];
  /** When the next step is due; absent when none is left. */
  nextAt?: Date;
}

/** One person's approval towards a quorum, recorded while the call stays pending. */
export interface ApprovalRecord {
  by: ActorRef;
  at: Date;
  kind: 'approve' | 'always_allow';
  reason?: string;
  editedArguments?: Record<string, unknown>;
  /** The passkey assertion this approval was made with, when its rule asks for one. */
  stepUp?: StepUpProof;
}

export interface ActorRef {
  id: string;
  name?: string;
  via: Channel;
  /** The channel's own user a person acted as (a Slack user id), when the channel has one. */
  channelUser?: string;
  /** `client`: an MCP client relayed the decision, with no proof a person saw the call. */
  assurance?: 'client';
  /** A delegate's decision: the delegator whose authority it was made with (`id` is the delegate who acted). */
  onBehalfOf?: OnBehalfOf;
}

/**
 * `respond`: the call does not run; the person's `response` is what the agent is told instead (a rejection).
 * `always_reject`: a rejection that also makes a standing deny in `scope` (rules/allowed-decisions).
 */
export type DecisionKind = 'approve' | 'reject' | 'always_allow' | 'respond' | 'always_reject';

/** A person's decision on a held call, as the commands bring it. */
export interface DecisionInput {
  decision: DecisionKind;
  reason?: string;
  arguments?: Record<string, unknown>;
  /** always_allow / always_reject only: where the standing grant or deny applies (default `conversation`). */
  scope?: GrantScope;
  /** respond only: what the agent is told instead of the tool's result (at most 4,000 characters). */
  response?: string;
  /** A passkey assertion, as the application verified it, for a call whose rule asks for one (rules/step-up). */
  stepUp?: StepUpEvidence;
}

/**
 * A claim made with a proposal that carried an idempotency key, and the id of the receipt it was answered with:
 * the same request retried (its answer lost) is answered the same claim, never a second run.
 */
export interface ClaimKey {
  key: string;
  receiptId: string;
}

/** Who decides, and through which channel. */
export interface Decider extends Principal {
  via: ActorRef['via'];
}
export type DecisionOutcome = 'approved' | 'rejected' | 'expired' | 'cancelled';

export interface DecisionRecord {
  outcome: DecisionOutcome;
  by: ActorRef;
  at: Date;
  /** What the person chose; `approve` and `always_allow` differ for idempotency. */
  kind?: DecisionKind;
  reason?: string;
  editedArguments?: Record<string, unknown>;
  /** always_allow: the scope asked for (a manual call makes no grant); compared when the same person asks again. */
  grantScope?: GrantScope;
  /** The passkey assertion the approval was made with, when its rule asks for one (a quorum's: on each approval). */
  stepUp?: StepUpProof;
  /** respond: the person's answer, given to the agent as the tool's answer (the call did not run). */
  response?: string;
}

export interface ToolCallState {
  id: string;
  externalId?: string;
  conversationId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  annotations?: ToolFlags;
  reason?: string;
  confidence?: number;
  estimatedCost?: number;
  display?: ToolCallDisplay;
  /** What the call will do, as proposed for people to see; its digest is bound to the decision and the receipt. */
  preview?: CallPreview;
  status: ToolCallStatus;
  policy: PolicyRecord;
  approval?: { approvers: string[]; expiresAt: Date };
  /** Approvals so far, when the policy asks for a quorum (the last one approves the call). */
  approvals?: ApprovalRecord[];
  /** Escalation and reminders, on held calls whose rule has them. */
  followUp?: FollowUpState;
  decision?: DecisionRecord;
  execution?: { at: Date; by: ActorRef; claim?: ClaimKey };
  result?: { outcome: 'succeeded' | 'failed'; output?: unknown; error?: string; at: Date };
  cancellation?: { by: ActorRef; at: Date; reason: string };
  /**
   * The real values of the secret arguments, sealed (opaque here: application/redaction seals and opens it). Absent
   * when no name of the tool or policy marked an argument secret. `arguments` and every edit hold the masked values; only the claim opens this.
   */
  sealedArguments?: string;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A tool call proposed by an agent. Changed only through its Conversation, which
 * records the matching event; the entity guards the transition itself.
 */
export class ToolCall {
  private constructor(private s: ToolCallState) {}

  static create(state: ToolCallState): ToolCall {
    return new ToolCall({ ...state });
  }

  static rehydrate(state: ToolCallState): ToolCall {
    return new ToolCall({ ...state });
  }

  get id(): string {
    return this.s.id;
  }
  get externalId(): string | undefined {
    return this.s.externalId;
  }
  get toolName(): string {
    return this.s.toolName;
  }
  get status(): ToolCallStatus {
    return this.s.status;
  }
  get arguments(): Record<string, unknown> {
    return this.s.arguments;
  }
  get decision(): DecisionRecord | undefined {
    return this.s.decision;
  }
  get approval(): ToolCallState['approval'] {
    return this.s.approval;
  }
  get policy(): PolicyRecord {
    return this.s.policy;
  }
  get approvals(): readonly ApprovalRecord[] {
    return this.s.approvals ?? [];
  }
  get preview(): CallPreview | undefined {
    return this.s.preview;
  }
  get createdAt(): Date {
    return this.s.createdAt;
  }

  /** The arguments that will actually run: a person's edit wins over the agent's proposal. */
  get argumentsToRun(): Record<string, unknown> {
    return this.s.decision?.editedArguments ?? this.s.arguments;
  }

  isExpiredAt(at: Date): boolean {
    return this.s.status === 'pending' && !!this.s.approval && this.s.approval.expiresAt.getTime() <= at.getTime();
  }

  snapshot(): Readonly<ToolCallState> {
    return this.s;
  }

  /** @internal A pending call learns who may decide it and until when. */
  awaitApproval(approvers: string[], expiresAt: Date): void {
    if (this.s.status !== 'pending') throw new IllegalTransitionError(this.s.id, this.s.status, 'pending');
    this.s = { ...this.s, approval: { approvers, expiresAt } };
  }

  /** @internal The escalation and reminder state (see Conversation.followUpDue). */
  setFollowUp(followUp: FollowUpState | undefined, approval?: { approvers: string[]; expiresAt: Date }): void {
    this.s = { ...this.s, followUp, ...(approval ? { approval } : {}) };
  }

  /** @internal One approval towards a quorum: the call stays pending. */
  recordApproval(approval: ApprovalRecord, at: Date): void {
    if (this.s.status !== 'pending') throw new IllegalTransitionError(this.s.id, this.s.status, 'approved');
    this.s = { ...this.s, approvals: [...(this.s.approvals ?? []), approval], updatedAt: at };
  }

  /** @internal The sealed real values of secret arguments, after a person's edit (application/redaction). */
  reseal(sealedArguments: string): void {
    this.s = { ...this.s, sealedArguments };
  }

  /** @internal used by Conversation only. */
  moveTo(to: ToolCallStatus, at: Date, changes: Partial<ToolCallState> = {}): void {
    if (!canMove(this.s.status, to)) throw new IllegalTransitionError(this.s.id, this.s.status, to);
    this.s = { ...this.s, ...changes, status: to, updatedAt: at };
  }
}
