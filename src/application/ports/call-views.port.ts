import type { ReviewerDecision } from '../../domain/audit/reviewer-quality';

/**
 * When each person was first shown a held call's card, as the server saw it (issue 28, part 9): not an audit
 * event, one row per call and person at most. Read back with the decisions of a window to time them.
 */
export const CALL_VIEWS = Symbol('CallViews');

/** At most this many people are recorded per call; at most this many calls per recording. */
export const MAX_VIEWERS_PER_CALL = 100;
export const MAX_CALLS_PER_VIEW = 200;

export interface CallViews {
  /** Records that `personId` was shown these calls at `at`, unless recorded before (the first time stays). */
  seen(tenantId: string, callIds: readonly string[], personId: string, at: Date): Promise<void>;
  /**
   * People's decisions on held calls in the window (approvals, quorum approvals, rejections; not the policy's
   * denials), in seq order, at most `limit`, each with the call's request time and the decider's first view.
   */
  decisions(tenantId: string, window: { from?: Date; to?: Date }, limit: number): Promise<ReviewerDecision[]>;
}
