import type { ActorRef, DecisionOutcome, DecisionRecord } from '../../domain/conversation/tool-call.entity';
import type { StepUpProof } from '../../domain/conversation/rules/step-up';
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
  /** The passkey the approval was made with, when its rule asks for one (the whole assertion is in the audit trail). */
  stepUp?: StepUpView;
  /** respond: the person's answer, which the agent is given as the tool's answer (the call did not run). */
  response?: string;
};

/** A step-up as the API shows it: which passkey signed, of which authenticator model, with user verification. */
export interface StepUpView {
  method: 'passkey';
  credentialId: string;
  aaguid: string;
  userVerified: true;
}

export function stepUpView(p: StepUpProof): StepUpView {
  return { method: p.method, credentialId: p.credentialId, aaguid: p.aaguid, userVerified: p.userVerified };
}

/** The standing decision as the contract shows it: the bookkeeping (`kind`, `grantScope`) kept out, `at` as ISO text. */
export function publicDecision(d: DecisionRecord | undefined): DecisionView | undefined {
  const shown = standingDecision(d);
  if (!shown) return undefined;
  const { stepUp, ...rest } = shown;
  return { ...rest, at: shown.at.toISOString(), ...(stepUp ? { stepUp: stepUpView(stepUp) } : {}) };
}
