import { Principal } from '../../../domain/shared/actor';

/** Retention: drop a tenant's audit events older than `before` (never younger than six months). */
export class PurgeAuditTrailCommand {
  constructor(
    readonly principal: Principal,
    readonly before: Date,
    readonly reason: string,
  ) {}
}
