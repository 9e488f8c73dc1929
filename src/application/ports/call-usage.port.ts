import type { TriggerScope } from '../../domain/policy/policy-document';

export const CALL_USAGE = Symbol('CallUsageReader');

/** One window a rule's trigger counts over: calls of the tools its glob names, proposed within `per` seconds. */
export interface UsageWindow {
  /** The rule's glob on tool names (`delete_*`): `*` any run of characters, `?` one. */
  toolGlob: string;
  by: TriggerScope;
  per: number;
}

/** What came before, in one window: calls proposed, and the estimated cost of those not refused. */
export interface WindowUsage {
  calls: number;
  cost: number;
}

/** Whose calls a window counts: the proposing conversation and its agent. */
export interface UsageScope {
  agentId: string;
  conversationId: string;
}

/**
 * Counts calls for velocity and budget triggers (`when.rateAbove`, `when.costAbove`). Counting and the proposal's
 * own save must be one transaction holding a lock per scope, so that two proposals in the same scope on any
 * instances count each other: outside a transaction `usage` throws TransactionRequired, and the unit of work runs
 * the command again in one.
 */
export interface CallUsageReader {
  usage(tenantId: string, scope: UsageScope, windows: readonly UsageWindow[], now: Date): Promise<WindowUsage[]>;
}

/** Thrown by work that must run in a transaction when a unit of work ran it without one: it is run again in one. */
export class TransactionRequired extends Error {
  constructor(why: string) {
    super(`a transaction is required: ${why}`);
  }
}
