import { Principal } from '../../../domain/shared/actor';
import { Command } from '@nestjs/cqrs';

/** Retention: drop a tenant's audit events older than `before` (never younger than six months). */
/** What a purge removed: the seq range only when it removed something. */
export interface AuditPurgeResult {
  before: string;
  purgedCount: number;
  firstPurgedSeq?: number;
  lastPurgedSeq?: number;
}

export class PurgeAuditTrailCommand extends Command<AuditPurgeResult> {
  constructor(
    readonly principal: Principal,
    readonly before: Date,
    readonly reason: string,
  ) {
    super();
  }
}
