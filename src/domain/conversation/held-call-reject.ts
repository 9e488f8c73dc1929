import type { EventEnvelope } from '../shared/event-base';
import type { GrantScope } from '../policy/grant-limit';
import { policyRef, ToolCallRejected } from './conversation.events';
import type { ActorRef, DecisionInput, ToolCall } from './tool-call.entity';
import type { DomainEvent } from '../shared/domain-event';

/** What a successful always_reject asks the caller to create in the same unit of work: a standing deny. */
export interface DenyRequest {
  toolName: string;
  scope: GrantScope;
}

/** What a rejection needs of its call's course (held-call.ts CallCourse). */
interface RejectionCourse {
  record(event: DomainEvent): void;
  changed(at: Date): void;
}

/**
 * A rejection of a pending call, as a person made it: `reject` (with its reason), `respond` (the call does not run
 * and the agent is told `response` instead: the decision and the event keep it), or `always_reject` (a rejection
 * that also asks for a standing deny in `scope`, default `conversation`). Records ToolCallRejected.
 */
export function rejectCall(
  call: ToolCall,
  input: DecisionInput,
  ref: ActorRef,
  at: Date,
  env: EventEnvelope,
  c: RejectionCourse,
  onBehalf: { onBehalfOf?: string },
): DenyRequest | undefined {
  const kind = input.decision;
  const scope = kind === 'always_reject' ? (input.scope ?? 'conversation') : undefined;
  const response = kind === 'respond' ? input.response : undefined;
  call.moveTo('rejected', at, {
    decision: {
      outcome: 'rejected',
      by: ref,
      at,
      kind,
      reason: input.reason,
      ...(response !== undefined ? { response } : {}),
      ...(scope ? { grantScope: scope } : {}),
    },
  });
  c.record(
    new ToolCallRejected(env, {
      outcome: 'rejected',
      rejectedBy: ref.id,
      ...onBehalf,
      via: ref.via,
      latencyMs: at.getTime() - call.createdAt.getTime(),
      reason: input.reason,
      ...(kind === 'respond' || kind === 'always_reject' ? { decision: kind } : {}),
      ...(response !== undefined ? { response } : {}),
      ...(scope ? { scope } : {}),
      ...policyRef(call.policy),
    }),
  );
  c.changed(at);
  return scope ? { toolName: call.toolName, scope } : undefined;
}
