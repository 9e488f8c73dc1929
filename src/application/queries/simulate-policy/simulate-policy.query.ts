import type { ToolFlags } from '../../../domain/policy/approval-policy';

/** A call to judge as if proposed now; `conversationId` gives it that conversation's agent and user. */
export interface HypotheticalCall {
  toolName: string;
  arguments: Record<string, unknown>;
  annotations?: ToolFlags;
  confidence?: number;
  estimatedCost?: number;
  conversationId?: string;
}

/** What a candidate policy document would do: to the given calls, or to the calls recorded since a time. */
export class SimulatePolicyQuery {
  constructor(
    readonly tenantId: string,
    /** The candidate document as parsed from JSON; validated as PUT validates it. */
    readonly document: unknown,
    /** Given calls, or recorded ones: proposed at or after `since`, else in the last `days` (by the app's clock). */
    readonly over: { calls: HypotheticalCall[] } | { since?: Date; days: number; limit: number },
  ) {}
}
