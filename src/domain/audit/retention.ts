import { AggregateRoot } from '../shared/aggregate-root';
import { Actor } from '../shared/actor';
import { ValidationError } from '../shared/domain-error';
import { BaseEvent } from '../shared/event-base';

/** EU AI Act Art. 19: logs are kept at least six months. Nothing younger is ever purged. */
export const RETENTION_MONTHS = 6;

export function oldestPurgeableBefore(now: Date): Date {
  const d = new Date(now.getTime());
  d.setUTCMonth(d.getUTCMonth() - RETENTION_MONTHS);
  return d;
}

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

export interface PurgedRange {
  count: number;
  firstSeq: number;
  lastSeq: number;
  /** The hash of the last purged event: the anchor the remaining chain starts from. */
  lastHash: string;
}

/**
 * A retention purge of the oldest part of a tenant's trail. It is itself an event, appended to the
 * chain, and names the hash the remaining chain continues from, so verify still proves the rest intact.
 */
export class AuditPurge extends AggregateRoot {
  private constructor(tenantId: string) {
    super(tenantId, 0);
  }

  /** Refuses a cut-off younger than the retention period. */
  static check(before: Date, now: Date): void {
    if (before.getTime() > oldestPurgeableBefore(now).getTime()) {
      throw new ValidationError([
        {
          path: 'before',
          message: `must be at least ${RETENTION_MONTHS} months ago (EU AI Act Art. 19): on or before ${oldestPurgeableBefore(now).toISOString()}`,
        },
      ]);
    }
  }

  static record(input: {
    tenantId: string;
    before: Date;
    range: PurgedRange;
    by: Actor;
    reason: string;
    at: Date;
  }): AuditPurge {
    AuditPurge.check(input.before, input.at);
    const p = new AuditPurge(input.tenantId);
    p.record(
      new AuditPurged(
        { tenantId: input.tenantId, at: input.at, actor: input.by },
        {
          before: input.before.toISOString(),
          purgedCount: input.range.count,
          firstPurgedSeq: input.range.firstSeq,
          lastPurgedSeq: input.range.lastSeq,
          lastPurgedHash: input.range.lastHash,
          reason: input.reason,
        },
      ),
    );
    return p;
  }
}
