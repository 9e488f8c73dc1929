/* The event of a retention purge; names are past tense. */
import { BaseEvent } from '../shared/event-base';

export class AuditPurged extends BaseEvent<{
  before: string;
  purgedCount: number;
  firstPurgedSeq: number;
  lastPurgedSeq: number;
  lastPurgedHash: string;
  reason: string;
}> {
  readonly type = 'AuditPurged' as const;
}
