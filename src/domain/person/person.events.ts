import { BaseEvent } from '../shared/event-base';

/**
 * A decision clicked in a channel by a user linked to no person (or to one never seen): refused and recorded,
 * as separation of duties' refusals are (`DecisionRefused`, with its own code). Nothing else changed.
 */
export class UnlinkedDecisionRefused extends BaseEvent<{
  decision: 'approve' | 'reject' | 'always_allow';
  code: 'unlinked_channel_user';
  refusedBy: string;
  via: string;
  channelUser: string;
  reason: string;
  level: string;
  rule: number | null;
  policyVersion: number;
}> {
  readonly type = 'DecisionRefused' as const;
}
