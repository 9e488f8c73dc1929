import { Query } from '@nestjs/cqrs';
import type { ToolFlags } from '../../../domain/policy/approval-policy';
import type { SimulationResult, SimulationSummary } from '../../../domain/policy/policy-simulation';

/** A call to judge as if proposed now; `conversationId` gives it that conversation's agent and user. */
export interface HypotheticalCall {
  toolName: string;
  arguments: Record<string, unknown>;
  annotations?: ToolFlags;
  confidence?: number;
  estimatedCost?: number;
  conversationId?: string;
}

export interface SimulatedCallView extends SimulationResult {
  /** Recorded calls: the call's id and when it was proposed. */
  toolCallId?: string;
  proposedAt?: string;
  /** Given calls: their index in the request. */
  index?: number;
  conversationId: string | null;
  toolName: string;
}

export interface SimulationView {
  /** The version in force, whose document `then` is judged by for given calls. */
  policyVersion: number;
  over: 'calls' | 'recorded';
  since: string | null;
  /** More calls were recorded since `since` than were judged (the newest `limit` were). */
  truncated: boolean;
  results: SimulatedCallView[];
  summary: SimulationSummary;
}

/** What a candidate policy document would do: to the given calls, or to the calls recorded since a time. */
export class SimulatePolicyQuery extends Query<SimulationView> {
  constructor(
    readonly tenantId: string,
    /** The candidate document as parsed from JSON; validated as PUT validates it. */
    readonly document: unknown,
    /** Given calls, or recorded ones: proposed at or after `since`, else in the last `days` (by the app's clock). */
    readonly over: { calls: HypotheticalCall[] } | { since?: Date; days: number; limit: number },
  ) {
    super();
  }
}
