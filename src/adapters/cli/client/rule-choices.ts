/**
 * What the call's rule lets a person decide in the terminal (issue 28 part 4): `approval.allowedDecisions`,
 * `rejectReasons` (offered as a numbered choice) and `rejectFreeText`. The server refuses anything else with
 * 403 decision_not_allowed; these keep the terminal from offering it.
 */
export type RuleDecision = 'approve' | 'edit' | 'reject' | 'always_allow' | 'respond';

interface WithApproval {
  approval?: { allowedDecisions?: string[]; rejectReasons?: string[]; rejectFreeText?: boolean } | unknown;
}

function choices(a: WithApproval) {
  return (a.approval ?? {}) as { allowedDecisions?: string[]; rejectReasons?: string[]; rejectFreeText?: boolean };
}

/** Why the rule does not allow `d` on this call, as a line for the terminal, or undefined when it does. */
export function ruleRefusal(a: WithApproval, d: RuleDecision): string | undefined {
  const allowed = choices(a).allowedDecisions;
  if (!allowed || allowed.includes(d)) return undefined;
  const words: Record<RuleDecision, string> = {
    approve: 'an approval',
    edit: 'an edit',
    reject: 'a rejection',
    always_allow: 'always allow',
    respond: 'an answer instead',
  };
  return `this call's rule does not allow ${words[d]} (it allows: ${allowed.join(', ')})`;
}

/** The reasons as a numbered list for the prompt ("1 Duplicate · 2 Wrong amount"), or undefined without reasons. */
export function reasonMenu(a: WithApproval): string | undefined {
  const { rejectReasons: reasons, rejectFreeText: free } = choices(a);
  if (!reasons?.length) return undefined;
  return `${reasons.map((r, i) => `${i + 1} ${r}`).join(' · ')}${free ? ' · or type your own' : ''}`;
}

/**
 * The reason a typed answer gives: with the rule's reasons, a number picks one (or, with rejectFreeText, any text
 * is the reason); without them, the text as typed (possibly none). `error` when the answer gives no allowed reason.
 */
export function reasonFrom(a: WithApproval, typed: string): { reason?: string } | { error: string } {
  const { rejectReasons: reasons, rejectFreeText: free } = choices(a);
  const text = typed.trim();
  if (!reasons?.length) return text ? { reason: text } : {};
  const n = /^\d{1,3}$/.test(text) ? Number(text) : NaN;
  if (n >= 1 && n <= reasons.length) return { reason: reasons[n - 1] };
  const exact = reasons.find((r) => r === text);
  if (exact) return { reason: exact };
  if (free && text) return { reason: text };
  return { error: `choose a reason by its number, 1 to ${reasons.length}${free ? ', or type your own' : ''}` };
}
