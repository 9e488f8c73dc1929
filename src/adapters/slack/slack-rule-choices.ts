import type { ApprovalRequest } from '../../application/ports/approval-callback.port';

/** The action ids of a request message's buttons, by the rule decision each makes. */
export interface RuleButtons {
  approve: string;
  reject: string;
  alwaysAllow: string;
}

/**
 * A request message as the call's rule allows (issue 28 part 4, `approval.allowedDecisions`): buttons for decisions
 * the rule does not allow are left out, and a row left empty goes too. The server refuses them anyway
 * (403 decision_not_allowed); this keeps Slack from offering them. With `rejectReasons`, Reject still opens the
 * reason modal, whose answer the server checks against the list (its refusal names the reasons).
 */
export function withRuleChoices<M extends { blocks: Array<Record<string, unknown>> }>(
  r: Pick<ApprovalRequest, 'approval'>,
  message: M,
  ids: RuleButtons,
): M {
  const allowed = (r.approval as { allowedDecisions?: string[] } | undefined)?.allowedDecisions;
  if (!allowed) return message;
  const off = new Set<string>();
  if (!allowed.includes('approve')) off.add(ids.approve);
  if (!allowed.includes('reject')) off.add(ids.reject);
  if (!allowed.includes('always_allow')) off.add(ids.alwaysAllow);
  const blocks = message.blocks.flatMap((b) => {
    if (b.type !== 'actions' || !Array.isArray(b.elements)) return [b];
    const elements = (b.elements as Array<{ action_id?: string }>).filter((e) => !e.action_id || !off.has(e.action_id));
    return elements.length === 0 ? [] : [{ ...b, elements }];
  });
  return { ...message, blocks };
}
