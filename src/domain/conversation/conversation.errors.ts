import { DomainError } from '../shared/domain-error';
import { ToolCallStatus } from './tool-call-status';

export class ConversationNotFoundError extends DomainError {
  constructor(id: string) {
    super('not_found', 'not_found', `Conversation ${id} not found`);
  }
}

export class ToolCallNotFoundError extends DomainError {
  constructor(id: string) {
    super('not_found', 'not_found', `Tool call ${id} not found`);
  }
}

export class IllegalTransitionError extends DomainError {
  constructor(id: string, from: ToolCallStatus, to: ToolCallStatus) {
    super('illegal_transition', 'conflict', `Tool call ${id} cannot move from ${from} to ${to}`);
  }
}

export class ConversationBlockedError extends DomainError {
  constructor(pendingIds: string[]) {
    super(
      'conversation_blocked',
      'conflict',
      `The conversation is waiting for ${pendingIds.length} pending approval(s): ${pendingIds.join(', ')}`,
      {
        pendingToolCallIds: pendingIds,
      },
    );
  }
}

export class IdempotencyMismatchError extends DomainError {
  constructor(detail: string) {
    super('idempotency_mismatch', 'conflict', detail);
  }
}

export class AlreadyDecidedError extends DomainError {
  constructor(id: string, decision: unknown, status: ToolCallStatus) {
    super('already_decided', 'conflict', `Tool call ${id} is already ${status}`, { decision, toolCallStatus: status });
  }
}

export class NotApprovedError extends DomainError {
  constructor(id: string, status: ToolCallStatus) {
    super('not_approved', 'conflict', `Tool call ${id} is ${status}, not approved: it must not run`, {
      toolCallStatus: status,
    });
  }
}

export class AlreadyExecutedError extends DomainError {
  constructor(id: string, status: ToolCallStatus) {
    super('already_executed', 'conflict', `Tool call ${id} was already claimed for execution`, {
      toolCallStatus: status,
    });
  }
}

export class NotExecutedError extends DomainError {
  constructor(id: string, status: ToolCallStatus) {
    super('not_executed', 'conflict', `Tool call ${id} is ${status}: claim the execution before reporting a result`, {
      toolCallStatus: status,
    });
  }
}

export class AlreadyCompletedError extends DomainError {
  constructor(id: string) {
    super('already_completed', 'conflict', `Tool call ${id} already has a result`);
  }
}

export class NotAllowedToDecideError extends DomainError {
  constructor(reason: string) {
    super('forbidden', 'forbidden', reason);
  }
}

/** An always_allow asked for a standing grant wider than the caller's roles and the policy allow. */
export class GrantNotAllowedError extends DomainError {
  constructor(reason: string, requestedScope: string, allowedScope: string) {
    super('forbidden', 'forbidden', reason, { requestedScope, allowedScope });
  }
}

/** Separation of duties: the conversation's user or the agent's owner may not approve its calls. */
export class SelfApprovalError extends DomainError {
  constructor(reason: string) {
    super('self_approval', 'forbidden', reason);
  }
}

/**
 * An MCP chat client relayed an approval the call's rule does not take from a chat: a person decides it in the
 * inbox. `card` is the call's place in the web inbox, relative to the service's address.
 */
export class ChatApprovalNotAllowedError extends DomainError {
  constructor(toolCallId: string, reason: string) {
    const card = cardPath(toolCallId);
    super('chat_approval_not_allowed', 'forbidden', `${reason}; decide it in the Tollgate inbox: ${card}`, {
      toolCallId,
      card,
    });
  }
}

/**
 * The call's rule asks for a passkey (`stepUp: passkey`), and the approval brought no assertion that proves a
 * present person approved it (`step_up_required`), or one made for another call or other arguments
 * (`step_up_mismatch`). Either way the call stays pending; `card` is where a passkey can sign for it.
 */
export class StepUpError extends DomainError {
  constructor(toolCallId: string, code: 'step_up_required' | 'step_up_mismatch', reason: string) {
    const card = cardPath(toolCallId);
    super(code, 'forbidden', reason, { toolCallId, card, stepUp: 'passkey' });
  }
}

/** A call's card in the web inbox (its hash route), relative to the address people reach the service at. */
export function cardPath(toolCallId: string): string {
  return `/#/calls/${encodeURIComponent(toolCallId)}`;
}

/** A quorum's approvals must approve the same arguments: the first approval fixed them. */
export class QuorumArgumentsMismatchError extends DomainError {
  constructor(id: string) {
    super(
      'quorum_arguments_mismatch',
      'conflict',
      `Tool call ${id} already has an approval of other arguments: approve those, or reject the call`,
    );
  }
}

export class HaltedError extends DomainError {
  constructor(scope: string, reason: string) {
    super('halted', 'unavailable', `Halted (${scope}): ${reason}`, { scope });
  }
}

/**
 * One human, one authority: an approval towards a quorum by a person whose authority already counts there, given
 * by them or by a delegate on their behalf (ann after bob approved for her, or bob for ann after ann approved).
 */
export class AuthorityCountedError extends DomainError {
  constructor(
    id: string,
    counted: { by: { id: string; onBehalfOf?: { id: string } }; at: Date },
    status: ToolCallStatus,
  ) {
    const who = counted.by.onBehalfOf
      ? `${counted.by.id} approved it on behalf of ${counted.by.onBehalfOf.id}`
      : `${counted.by.id} approved it`;
    super('already_decided', 'conflict', `Tool call ${id} already counts this authority towards its quorum: ${who}`, {
      decision: { outcome: 'approval_recorded', by: counted.by, at: counted.at },
      toolCallStatus: status,
    });
  }
}

/** A decision the call's rule does not allow (`allowedDecisions`, `rejectReasons`): 403 decision_not_allowed. */
export class DecisionNotAllowedError extends DomainError {
  constructor(
    toolCallId: string,
    reason: string,
    policy: { allowedDecisions?: readonly string[]; rejectReasons?: readonly string[]; rejectFreeText?: true },
  ) {
    super('decision_not_allowed', 'forbidden', reason, {
      toolCallId,
      ...(policy.allowedDecisions ? { allowedDecisions: [...policy.allowedDecisions] } : {}),
      ...(policy.rejectReasons ? { rejectReasons: [...policy.rejectReasons] } : {}),
      ...(policy.rejectFreeText ? { rejectFreeText: true } : {}),
    });
  }
}
