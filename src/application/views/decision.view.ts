import type { ActorRef, DecisionOutcome, DecisionRecord } from '../../domain/conversation/tool-call.entity';
import { standingDecision } from '../../domain/conversation/rules/first-decision-wins';

/** A call's standing decision as the API shows it (`decision` on a tool call, and in an already_decided problem). */
export type DecisionView = {
  outcome: DecisionOutcome;
  by: ActorRef;
  at: string;
  reason?: string;
  editedArguments?: Record<string, unknown>;
};

/** The standing decision as the contract shows it: the bookkeeping (`kind`, `grantScope`) kept out, `at` as ISO text. */
export function publicDecision(d: DecisionRecord | undefined): DecisionView | undefined {
  const shown = standingDecision(d);
  return shown && { ...shown, at: shown.at.toISOString() };
}
