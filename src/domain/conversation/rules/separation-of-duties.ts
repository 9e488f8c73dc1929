import type { DecisionKind, PolicyRecord } from '../tool-call.entity';
import { isRejection } from './allowed-decisions';

/** The people a call is for: with `selfApproval: false` neither may approve it. */
export interface InterestedParties {
  userId?: string;
  agentOwner?: string;
}

/**
 * Separation of duties: where the deciding rule says `selfApproval: false`, the conversation's user and the
 * agent's owner may reject the call but not approve it. Returns the refusal's reason, or undefined.
 */
export function selfApprovalRefusal(
  decision: DecisionKind,
  policy: Pick<PolicyRecord, 'selfApproval'>,
  deciderId: string,
  parties: InterestedParties,
): string | undefined {
  if (isRejection(decision) || policy.selfApproval !== false) return undefined;
  const self =
    parties.userId === deciderId
      ? "the conversation's user"
      : parties.agentOwner === deciderId
        ? "the agent's owner"
        : undefined;
  return self && `Separation of duties: ${self} may not approve this call; another approver must decide`;
}

/**
 * Separation of duties for the delegator a delegate acts for: a delegate never approves for ann a call ann could
 * not approve herself (she is its user, or the agent's owner). The delegate's own check (above) applies as well:
 * both people are held to it. Returns the refusal's reason, or undefined.
 */
export function onBehalfRefusal(
  decision: DecisionKind,
  policy: Pick<PolicyRecord, 'selfApproval'>,
  delegatorId: string,
  parties: InterestedParties,
): string | undefined {
  const own = selfApprovalRefusal(decision, policy, delegatorId, parties);
  if (!own) return undefined;
  const self = parties.userId === delegatorId ? "the conversation's user" : "the agent's owner";
  return `Separation of duties: ${delegatorId}, on whose behalf you act, is ${self} and may not approve this call; another approver must decide`;
}
