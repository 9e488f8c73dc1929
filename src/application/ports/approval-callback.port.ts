import type { ApprovalView, ToolCallView } from '../views/views';

/**
 * How Tollgate asks people, whatever the channel (terminal, Slack, webhooks, …): one adapter per channel.
 * Adapters are driven from the transactional outbox after commit (each channel has its own cursor, so a
 * slow or failing channel never delays a decision or another channel). They turn their own input — a key
 * press, a Slack click, an HTTP call — into the same DecideToolCallCommand; none touches the domain.
 */
export const APPROVAL_CALLBACKS = Symbol('ApprovalCallbacks');

/** A call waiting for a person: the call with its conversation's agent, user and title (as GET /v1/approvals shows it). */
export type ApprovalRequest = ApprovalView & { tenantId: string };

export type ApprovalOutcomeKind = 'approved' | 'rejected' | 'expired' | 'cancelled';

/** The end of a request, whichever channel (or the clock, or a halt) ended it. */
export interface ApprovalOutcome {
  tenantId: string;
  outcome: ApprovalOutcomeKind;
  toolCall: ToolCallView;
  /** Who decided and where: `{id: 'ann', name: 'Ann', via: 'slack'}`; the system for expiries and halts. */
  by: { id: string; name?: string; via: string; onBehalfOf?: { id: string; name?: string } };
  reason?: string;
}

export interface ApprovalCallback {
  /** Stable channel name: also the outbox consumer's name, under which its cursor is kept. */
  readonly channel: string;
  /** A request appeared. Throwing makes the outbox retry this delivery with backoff. */
  ask(request: ApprovalRequest): Promise<void>;
  /** A request ended (decided here, on another channel, expired or cancelled). Throwing retries it. */
  tell(outcome: ApprovalOutcome): Promise<void>;
  /** A request gained an approval towards its quorum and still waits ("1 of 2"). Channels that show progress implement it. */
  progress?(request: ApprovalRequest): Promise<void>;
  /**
   * A waiting request escalated (more people may decide it; only channels its step names are told) or nears its
   * deadline. `text` says which, for people.
   */
  remind?(request: ApprovalRequest, note: { kind: 'escalated' | 'reminder'; text: string }): Promise<void>;
  /**
   * A `notify` call ran at once (no one decides it): an FYI for `approvers` (roles, or `requester`, the
   * conversation's user). Never followed by `tell`. Channels that tell people implement it; throwing retries it.
   */
  notify?(request: ApprovalRequest, told: { approvers: string[] }): Promise<void>;
}
