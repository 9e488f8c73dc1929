import type { EscalationStep } from '../../policy/policy-document';
import type { FollowUpState, ToolCall, ToolCallState } from '../tool-call.entity';

/** One escalation step taken: the `step`-th of the rule's, who it added, and who may decide after it. */
export interface EscalationTaken {
  step: number;
  of: number;
  rule: EscalationStep;
  added: string[];
  approvers: string[];
}

/** What is due on a pending call at an instant: escalation steps, the reminder to send, and the state after. */
export interface FollowUpDue {
  escalations: EscalationTaken[];
  /** The latest `remindBefore` due (of several due at once, only it is sent); undefined when none is. */
  remindBefore?: number;
  approvers: string[];
  followUp: Omit<FollowUpState, 'nextAt'>;
}

/**
 * Follow-up of a held call: escalation steps (each `after` seconds from the proposal) widen who may decide;
 * reminders fall `remindBefore` seconds ahead of the deadline. Returns what is due by `at`, or undefined when
 * nothing is: the call is not pending, its next step is not due yet, or its time is up (it expires instead).
 */
export function followUpDue(s: Readonly<ToolCallState>, at: Date): FollowUpDue | undefined {
  const f = s.followUp;
  if (s.status !== 'pending' || !f?.nextAt || f.nextAt.getTime() > at.getTime()) return undefined;
  if (s.approval && s.approval.expiresAt.getTime() <= at.getTime()) return undefined;
  const steps = s.policy.escalate ?? [];
  let approvers = [...(s.approval?.approvers ?? [])];
  let escalated = f.escalated;
  const escalations: EscalationTaken[] = [];
  while (escalated < steps.length && s.createdAt.getTime() + steps[escalated].after * 1000 <= at.getTime()) {
    const rule = steps[escalated];
    const added = (rule.approvers ?? []).filter((a) => !approvers.includes(a));
    approvers = [...approvers, ...added];
    escalated += 1;
    escalations.push({ step: escalated, of: steps.length, rule, added, approvers });
  }
  const due = (s.policy.remindBefore ?? []).filter(
    (b) => !f.reminded.includes(b) && reminderAt(s, b) !== undefined && reminderAt(s, b)!.getTime() <= at.getTime(),
  );
  return {
    escalations,
    ...(due.length > 0 ? { remindBefore: Math.min(...due) } : {}),
    approvers,
    followUp: { escalated, reminded: [...f.reminded, ...due] },
  };
}

/** When the reminder `before` seconds ahead of the deadline falls; undefined when it would fall before the call was made. */
function reminderAt(s: Readonly<ToolCallState>, before: number): Date | undefined {
  const t = s.approval!.expiresAt.getTime() - before * 1000;
  return t > s.createdAt.getTime() ? new Date(t) : undefined;
}

/** The follow-up state with `nextAt`: the earliest escalation or reminder not yet taken (none: absent). */
export function withNextStep(call: ToolCall, f: Omit<FollowUpState, 'nextAt'>): FollowUpState {
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
