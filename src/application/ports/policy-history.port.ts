import type { PolicyDocument } from '../../domain/policy/policy-document';
import type { ToolFlags } from '../../domain/policy/approval-policy';
import type { SupervisionLevel } from '../../domain/policy/supervision-level';

export const POLICY_HISTORY = Symbol('PolicyHistory');
export const RECORDED_CALLS = Symbol('RecordedToolCalls');

/** One stored version of a tenant's policy, without its document. */
export interface PolicyVersionSummary {
  version: number;
  createdAt: Date;
  createdBy: string;
  rules: number;
}

/** One stored version with its document. */
export interface PolicyVersionRecord {
  version: number;
  createdAt: Date;
  createdBy: string;
  document: PolicyDocument;
}

/** The versions a tenant's policy went through (policy_versions); versions never change once written. */
export interface PolicyHistory {
  /** Newest first; `before`: only versions below it (the keyset cursor). */
  list(tenantId: string, page: { before?: number; limit: number }): Promise<PolicyVersionSummary[]>;
  /** null when the tenant has no such version. */
  get(tenantId: string, version: number): Promise<PolicyVersionRecord | null>;
}

/** A tool call as it was proposed and judged, with the conversation facts the policy weighs. */
export interface RecordedToolCall {
  id: string;
  conversationId: string;
  agentId: string;
  /** `verified`: the user was verified from their own token when the conversation started. */
  user: { id: string; roles: string[]; verified?: boolean } | null;
  toolName: string;
  arguments: Record<string, unknown>;
  annotations?: ToolFlags;
  confidence?: number;
  estimatedCost?: number;
  createdAt: Date;
  /** What the policy gave when it was proposed. */
  policy: { level: SupervisionLevel; rule: number | null; policyVersion: number; reason: string };
}

/** Reads recorded tool calls for what-if questions (policy simulation); never writes. */
export interface RecordedToolCalls {
  /** The tenant's calls proposed at or after `since`, newest first, at most `limit`. */
  proposedSince(tenantId: string, since: Date, limit: number): Promise<RecordedToolCall[]>;
}
