import type { DecisionKind, PolicyRecord } from '../tool-call.entity';

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
  if (decision === 'reject' || policy.selfApproval !== false) return undefined;
  const self =
    parties.userId === deciderId
      ? "the conversation's user"
      : parties.agentOwner === deciderId
        ? "the agent's owner"
        : undefined;
  return self && `Separation of duties: ${self} may not approve this call; another approver must decide`;
}
