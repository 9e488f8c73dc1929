import { Actor, OnBehalfOf, onBehalfOfRef, personActor, Principal, SYSTEM_ACTOR } from '../shared/actor';
import type { DomainError } from '../shared/domain-error';
import type { DomainEvent } from '../shared/domain-event';
import type { EventEnvelope } from '../shared/event-base';
import type { GrantScope } from '../policy/approval-policy';
import {
  ChatApprovalNotAllowedError,
  GrantNotAllowedError,
  SelfApprovalError,
  StepUpError,
} from './conversation.errors';
import {
  DecisionRefused,
  DecisionRefusedCode,
  GrantRefused,
  policyRef,
  ToolCallApprovalRecorded,
  ToolCallApproved,
  ToolCallDeadlineExtended,
  ToolCallEscalated,
  ToolCallExpired,
  ToolCallRejected,
  ToolCallReminded,
} from './conversation.events';
import { AlreadyDecidedError } from './conversation.errors';
import type { ActorRef, Decider, DecisionInput, ToolCall } from './tool-call.entity';
import { chatApprovalRefusal } from './rules/chat-approval';
import { checkMayExtendDeadline, checkNewDeadline } from './rules/deadline-extension';
import { decisionOnSettledCall, standingDecision } from './rules/first-decision-wins';
import { followUpDue, withNextStep } from './rules/follow-up';
import { quorumArguments, quorumStep } from './rules/quorum';
import { authorityFor } from './rules/delegated-authority';
import { InterestedParties, onBehalfRefusal, selfApprovalRefusal } from './rules/separation-of-duties';
import { standingGrantRefusal } from './rules/standing-grant-limit';
import { decisionNotAllowed, isRejection } from './rules/allowed-decisions';
import { DecisionNotAllowedError } from './conversation.errors';
import { DenyRequest, rejectCall } from './held-call-reject';
import { approvingArguments, StepUpProof, stepUpRefusal } from './rules/step-up';
import { checkMayDecide } from './rules/who-may-decide';

/** What a successful always_allow asks the caller to create in the same unit of work. */
export interface GrantRequest {
  toolName: string;
  scope: GrantScope;
  /** A delegate's always_allow: the delegator whose authority made the grant (its maker is still the delegate). */
  onBehalfOf?: OnBehalfOf;
}

export type DecisionResult =
  | { kind: 'decided'; call: ToolCall; grant?: GrantRequest; deny?: DenyRequest }
  | { kind: 'unchanged'; call: ToolCall }
  /** A refusal that still changed state (the call expired on the way): save first, then report. */
  | { kind: 'refused'; call: ToolCall; error: DomainError };

/** What a held call's course needs from its conversation: who the call is for, and where its events go. */
export interface CallCourse {
  /** The conversation's user and the agent's owner. */
  parties: InterestedParties;
  /** The envelope of an event on this call by `actor` at `at`. */
  envelope(actor: Actor, at: Date): EventEnvelope;
  record(event: DomainEvent): void;
  /** The call changed: it is saved with the conversation. */
  changed(at: Date): void;
}

/*
 * The course of a held call (`confirm` or `manual`) while it waits for people: their decisions, a quorum's
 * approvals, expiry, escalation and reminders, a longer deadline. Each step checks the named rules in rules/
 * and records one event per transition through its conversation (the aggregate root: only it calls these).
 */

/**
 * A person's decision, as a sequence of named rules. The first decision wins; the same request again by the same
 * person changes nothing. Thrown, with nothing recorded: an agent, a person outside the call's approvers
 * (who-may-decide), a quorum approval from outside its roles (quorum). Returned as `refused`, recorded first where
 * the refusal must be on record: a standing grant wider than allowed (standing-grant-limit; the call stays as it
 * was), self-approval (separation-of-duties), a chat client's approval the rule does not take (chat-approval), an
 * approval without the passkey its rule asks for, or with one made for another call or arguments (step-up); not recorded: a call already decided (first-decision-wins), a
 * quorum approval of other arguments.
 * `delegators`: the people whose delegation to `by` holds now (rules/delegated-authority). When `by` may not make
 * the decision with their own rights but one of them may, it is made on that delegator's behalf (`onBehalfOf` on
 * the decision and the event's actor), bounded by the delegator's rights: their roles limit a standing grant and
 * count towards a quorum, and separation of duties holds for both people.
 */
export function decideCall(
  call: ToolCall,
  input: DecisionInput,
  by: Decider,
  at: Date,
  c: CallCourse,
  delegators: readonly Principal[] = [],
): DecisionResult {
  const authority = authorityFor(by, call, input, c.parties, delegators);
  if (!authority) checkMayDecide(by, call, c.parties.userId);
  const delegator = authority?.kind === 'on_behalf' ? authority.of : undefined;
  const forWhom = delegator && onBehalfOfRef(delegator);
  const onBehalf = forWhom ? { onBehalfOf: forWhom.id } : {};
  const env = c.envelope({ ...personActor(by, by.via), ...(forWhom ? { onBehalfOf: forWhom } : {}) }, at);
  const scope = input.decision === 'always_allow' ? (input.scope ?? 'conversation') : undefined;
  // A standing deny is bounded by the decider's roles as a grant is (not by the rule's `grants`).
  const denyScope = input.decision === 'always_reject' ? (input.scope ?? 'conversation') : undefined;
  // A delegate grants what the delegator's roles allow, never more (nor what the delegate's own might).
  const tooWide =
    (scope && standingGrantRefusal(call.policy, scope, delegator ?? by)) ||
    (denyScope && standingGrantRefusal({ rule: call.policy.rule }, denyScope, delegator ?? by));
  if (tooWide) {
    c.record(
      new GrantRefused(env, {
        decision: 'always_allow' as const,
        ...tooWide,
        refusedBy: by.id,
        ...onBehalf,
        via: by.via,
        ...policyRef(call.policy),
      }),
    );
    return {
      kind: 'refused',
      call,
      error: new GrantNotAllowedError(tooWide.reason, tooWide.requestedScope, tooWide.allowedScope),
    };
  }
  if (call.isExpiredAt(at)) expireCall(call, at, c);
  if (call.status !== 'pending') {
    const settled = decisionOnSettledCall(call, input, by.id, scope ?? denyScope);
    return settled === 'unchanged' ? { kind: 'unchanged', call } : { kind: 'refused', call, error: settled };
  }
  // What the call's rule lets people decide (allowedDecisions, rejectReasons): refused before anything is recorded.
  const notAllowed = decisionNotAllowed(call.policy, input, approvingArguments(call, { arguments: undefined }));
  if (notAllowed) throw new DecisionNotAllowedError(call.id, notAllowed, call.policy);
  // Refusals of an approval the rules do not take, recorded first (a rejection is never refused by them).
  const refuse = (code: DecisionRefusedCode, reason: string, error: DomainError): DecisionResult => {
    const decision = input.decision as 'approve' | 'always_allow';
    c.record(
      new DecisionRefused(env, {
        decision,
        code,
        refusedBy: by.id,
        ...onBehalf,
        via: by.via,
        reason,
        ...policyRef(call.policy),
      }),
    );
    return { kind: 'refused', call, error };
  };
  // Separation of duties holds for the person who acts and for the delegator they act for.
  const self =
    selfApprovalRefusal(input.decision, call.policy, by.id, c.parties) ??
    (delegator && onBehalfRefusal(input.decision, call.policy, delegator.id, c.parties));
  if (self) return refuse('self_approval', self, new SelfApprovalError(self));
  const chat = chatApprovalRefusal(input.decision, call.policy, by.via);
  if (chat) return refuse('chat_approval_not_allowed', chat, new ChatApprovalNotAllowedError(call.id, chat));
  // A quorum member who approved already is answered by the quorum's own check (unchanged, or already decided),
  // not asked for a passkey again.
  const again = !!call.policy.quorum && call.approvals.some((a) => a.by.id === by.id);
  const stepUp = again
    ? undefined
    : stepUpRefusal(input.decision, call.policy, input.stepUp, call.id, approvingArguments(call, input));
  if (stepUp) return refuse(stepUp.code, stepUp.reason, new StepUpError(call.id, stepUp.code, stepUp.reason));
  const proof = input.stepUp?.outcome === 'verified' && call.policy.stepUp ? input.stepUp.proof : undefined;
  // The decision keeps who acted as the audit trail does: a Slack user they acted as, a chat client's relay.
  const { channelUser, assurance } = env.actor;
  const ref: ActorRef = {
    id: by.id,
    via: by.via,
    ...(by.name ? { name: by.name } : {}),
    ...(channelUser ? { channelUser } : {}),
    ...(assurance ? { assurance } : {}),
    ...(forWhom ? { onBehalfOf: forWhom } : {}),
  };
  const latencyMs = at.getTime() - call.createdAt.getTime();
  if (isRejection(input.decision)) {
    const deny = rejectCall(call, input, ref, at, env, c, onBehalf);
    return { kind: 'decided', call, ...(deny ? { deny } : {}) };
  }
  const kind = input.decision as 'approve' | 'always_allow';
  const quorum = call.policy.quorum;
  const step = quorum && quorumStep(call, input, by, delegator);
  if (step && step.kind !== 'complete') {
    if (step.kind !== 'counted') return step.kind === 'unchanged' ? { kind: 'unchanged', call } : { ...step, call };
    recordApproval(call, ref, at, input, step.editedArguments, proof);
    c.record(
      new ToolCallApprovalRecorded(env, {
        approvedBy: by.id,
        ...onBehalf,
        via: by.via,
        decision: kind,
        count: step.count,
        needed: step.needed,
        reason: input.reason,
        editedArguments: input.arguments,
        ...(proof ? { stepUp: proof } : {}),
        ...policyRef(call.policy),
      }),
    );
    c.changed(at);
    return { kind: 'decided', call };
  }

  // A manual call is approved but never turned into a standing grant; nor is a quorum's (one person's
  // standing approval may not stand in for several), nor one that needs a passkey (each call needs its own).
  const grant =
    scope && call.policy.level !== 'manual' && !quorum && !call.policy.stepUp
      ? { toolName: call.toolName, scope, ...(forWhom ? { onBehalfOf: forWhom } : {}) }
      : undefined;
  const editedArguments = quorum ? quorumArguments(call, input) : input.arguments;
  if (quorum) recordApproval(call, ref, at, input, editedArguments, proof);
  call.moveTo('approved', at, {
    decision: {
      outcome: 'approved',
      by: ref,
      at,
      kind,
      reason: input.reason,
      editedArguments,
      ...(scope ? { grantScope: scope } : {}),
      ...(proof ? { stepUp: proof } : {}),
    },
  });
  c.record(
    new ToolCallApproved(env, {
      outcome: 'approved',
      approvedBy: by.id,
      ...onBehalf,
      via: by.via,
      latencyMs,
      decision: kind,
      reason: input.reason,
      editedArguments,
      ...(quorum ? { approvals: call.approvals.map((a) => a.by.id) } : {}),
      ...(proof ? { stepUp: proof } : {}),
      ...(call.preview ? { preview: call.preview.digest } : {}),
      ...policyRef(call.policy),
    }),
  );
  c.changed(at);
  return { kind: 'decided', call, grant };
}

/** One quorum member's approval, kept on the call while it waits for the others (or with the last one). */
function recordApproval(
  call: ToolCall,
  by: ActorRef,
  at: Date,
  input: DecisionInput,
  editedArguments: Record<string, unknown> | undefined,
  stepUp: StepUpProof | undefined,
): void {
  call.recordApproval(
    {
      by,
      at,
      kind: input.decision as 'approve' | 'always_allow',
      ...(input.reason !== undefined ? { reason: input.reason } : {}),
      ...(editedArguments ? { editedArguments } : {}),
      ...(stepUp ? { stepUp } : {}),
    },
    at,
  );
}

/** The call's time is up: it expires, and no one may decide it any more. */
export function expireCall(call: ToolCall, at: Date, c: CallCourse): void {
  const expiresAt = call.approval!.expiresAt;
  call.moveTo('expired', at, {
    decision: { outcome: 'expired', by: { id: SYSTEM_ACTOR.id, via: SYSTEM_ACTOR.via }, at },
  });
  const waitedMs = at.getTime() - call.createdAt.getTime();
  c.record(
    new ToolCallExpired(c.envelope(SYSTEM_ACTOR, at), {
      outcome: 'expired',
      reason: `No decision before ${expiresAt.toISOString()}`,
      expiresAt: expiresAt.toISOString(),
      waitedMs,
      latencyMs: waitedMs,
      ...policyRef(call.policy),
    }),
  );
  c.changed(at);
}

/**
 * The escalation steps and reminder due by `at` (rules/follow-up), recorded: an escalation widens who may decide
 * and names the channels to tell; of several reminders due at once, only the latest. True when the call moved on.
 */
export function followUpCall(call: ToolCall, at: Date, c: CallCourse): boolean {
  const s = call.snapshot();
  const due = followUpDue(s, at);
  if (!due) return false;
  const env = c.envelope(SYSTEM_ACTOR, at);
  const expiresAt = s.approval!.expiresAt;
  for (const e of due.escalations) {
    c.record(
      new ToolCallEscalated(env, {
        step: e.step,
        of: e.of,
        afterSeconds: e.rule.after,
        added: e.added,
        approvers: e.approvers,
        notify: e.rule.notify ?? [],
        expiresAt: expiresAt.toISOString(),
        ...policyRef(s.policy),
      }),
    );
  }
  if (due.remindBefore !== undefined) {
    c.record(
      new ToolCallReminded(env, {
        remindBefore: due.remindBefore,
        secondsLeft: Math.max(0, Math.round((expiresAt.getTime() - at.getTime()) / 1000)),
        expiresAt: expiresAt.toISOString(),
        approvers: due.approvers,
        ...policyRef(s.policy),
      }),
    );
  }
  call.setFollowUp(withNextStep(call, due.followUp), { approvers: due.approvers, expiresAt });
  c.changed(at);
  return true;
}
