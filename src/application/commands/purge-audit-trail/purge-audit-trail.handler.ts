import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AuditPurge } from '../../../domain/audit/audit-purge.aggregate';
import { personActor } from '../../../domain/shared/actor';
import { CLOCK, Clock, UNIT_OF_WORK, UnitOfWork } from '../../ports';
import { AUDIT_RETENTION, AuditRetentionStore } from '../../ports/audit-log.port';
import { PurgeAuditTrailCommand } from './purge-audit-trail.command';

@CommandHandler(PurgeAuditTrailCommand)
export class PurgeAuditTrailHandler implements ICommandHandler<PurgeAuditTrailCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(AUDIT_RETENTION) private readonly retention: AuditRetentionStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ principal: p, before, reason }: PurgeAuditTrailCommand) {
    const at = this.clock.now();
    AuditPurge.check(before, at); // 400 before anything is touched
    return this.uow.run(async () => {
      const range = await this.retention.purgeBefore(p.tenant, before);
      if (!range) return { before: before.toISOString(), purgedCount: 0 };
      const by = personActor(p, 'api');
      await this.retention.save(AuditPurge.record({ tenantId: p.tenant, before, range, by, reason, at }));
      return {
        before: before.toISOString(),
        purgedCount: range.count,
        firstPurgedSeq: range.firstSeq,
        lastPurgedSeq: range.lastSeq,
      };
    });
  }
}
