import { Actor, agentActor, Principal } from '../shared/actor';
import type { DomainError } from '../shared/domain-error';
import { AlreadyCompletedError, AlreadyExecutedError, NotApprovedError, NotExecutedError } from './conversation.errors';
import { policyRef, ToolCallCancelled, ToolCallCompleted, ToolCallExecuted } from './conversation.events';
import type { CallCourse } from './held-call';
import { jsonEqual } from '../shared/json';
import type { ActorRef, ClaimKey, ToolCall } from './tool-call.entity';

export type ClaimResult = { kind: 'claimed'; call: ToolCall } | { kind: 'refused'; call: ToolCall; error: DomainError };

/*
 * The run of an approved call: the agent claims it, exactly once, then reports how it went. Recorded through
 * its conversation (the aggregate root: only it calls these), which has expired a call past its deadline and
 * refused any claim under a halt first.
 */

/** The agent claims the run of an approved call: refused when it was claimed already or is not approved. */
export function claimCall(call: ToolCall, agent: Principal, at: Date, c: CallCourse, key?: ClaimKey): ClaimResult {
  if (call.status === 'executed' || call.status === 'completed')
    return { kind: 'refused', call, error: new AlreadyExecutedError(call.id, call.status) };
  if (call.status !== 'approved') return { kind: 'refused', call, error: new NotApprovedError(call.id, call.status) };
  const by: ActorRef = { id: agent.id, via: agent.via ?? 'api', ...(agent.name ? { name: agent.name } : {}) };
  call.moveTo('executed', at, { execution: { at, by, ...(key ? { claim: key } : {}) } });
  c.record(
    new ToolCallExecuted(c.envelope(agentActor(agent.id, agent.name, agent.via), at), {
      arguments: call.argumentsToRun,
      edited: !!call.decision?.editedArguments,
      approvedBy: call.decision?.by.id ?? 'policy',
      approvedVia: call.decision?.by.via ?? 'policy',
      ...policyRef(call.policy),
    }),
  );
  c.changed(at);
  return { kind: 'claimed', call };
}

/** The agent reports how the run went, once: thrown when the call was not claimed or was reported already. */
export function completeCall(
  call: ToolCall,
  result: { outcome: 'succeeded' | 'failed'; output?: unknown; error?: string },
  agent: Principal,
  at: Date,
  c: CallCourse,
  /** The same result again (a retry that landed the first time) is taken as recorded; a different one is refused. */
  again = false,
): ToolCall {
  if (call.status === 'completed') {
    if (again && sameResult(call.snapshot().result, result)) return call;
    throw new AlreadyCompletedError(call.id);
  }
  if (call.status !== 'executed') throw new NotExecutedError(call.id, call.status);
  call.moveTo('completed', at, { result: { ...result, at } });
  const startedAt = call.snapshot().execution?.at ?? at;
  c.record(
    new ToolCallCompleted(c.envelope(agentActor(agent.id, agent.name, agent.via), at), {
      outcome: result.outcome,
      error: result.error,
      durationMs: at.getTime() - startedAt.getTime(),
    }),
  );
  c.changed(at);
  return call;
}

function sameResult(
  stored: { outcome: string; output?: unknown; error?: string } | undefined,
  sent: { outcome: string; output?: unknown; error?: string },
): boolean {
  return (
    !!stored &&
    stored.outcome === sent.outcome &&
    (stored.error ?? null) === (sent.error ?? null) &&
    jsonEqual(stored.output ?? null, sent.output ?? null)
  );
}

/**
 * A halt cancels an open call: it never runs. An approval already given stays in `decision`; a pending call gets a
 * cancellation outcome.
 */
export function cancelCall(call: ToolCall, reason: string, by: Actor, at: Date, c: CallCourse): void {
  const previousStatus = call.status;
  call.moveTo('cancelled', at, {
    cancellation: { by: { id: by.id, via: by.via, ...(by.name ? { name: by.name } : {}) }, at, reason },
    ...(previousStatus === 'pending'
      ? { decision: { outcome: 'cancelled' as const, by: { id: by.id, via: by.via }, at, reason } }
      : {}),
  });
  c.record(
    new ToolCallCancelled(c.envelope(by, at), {
      outcome: 'cancelled',
      reason,
      previousStatus,
      ...policyRef(call.policy),
    }),
  );
  c.changed(at);
}
