import type { ActorRef, DecisionOutcome, DecisionRecord } from '../../domain/conversation/tool-call.entity';
import type { Actor } from '../../domain/shared/actor';

/**
 * Who did something, as the API shows them: the person's id and channel, and where the channel has users of its
 * own, which one they acted as (`channelUser`, a Slack user id); `assurance: client` when an MCP client relayed it.
 */
export type ActorRefView = ActorRef & Pick<Actor, 'channelUser' | 'assurance'>;
import { standingDecision } from '../../domain/conversation/rules/first-decision-wins';

/** A call's standing decision as the API shows it (`decision` on a tool call, and in an already_decided problem). */
export type DecisionView = {
  outcome: DecisionOutcome;
  by: ActorRefView;
  at: string;
  reason?: string;
  editedArguments?: Record<string, unknown>;
};

/** The standing decision as the contract shows it: the bookkeeping (`kind`, `grantScope`) kept out, `at` as ISO text. */
export function publicDecision(d: DecisionRecord | undefined): DecisionView | undefined {
  const shown = standingDecision(d);
  return shown && { ...shown, at: shown.at.toISOString() };
}
