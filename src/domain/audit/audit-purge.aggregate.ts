import { AggregateRoot } from '../shared/aggregate-root';
import { Actor } from '../shared/actor';
import { ValidationError } from '../shared/domain-error';
import { AuditPurged } from './audit-purge.events';
import { oldestPurgeableBefore, RETENTION_MONTHS } from './rules/retention-period';

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
