import { AuditFilter } from '../../ports/audit-log.port';

type Window = { from?: Date; to?: Date };

/** A page of the tenant's audit trail in seq order; the cursor is the last seq seen. */
export class ListAuditEventsQuery {
  constructor(
    readonly filter: AuditFilter,
    readonly limit: number,
  ) {}
}

/** The same selection as a stream of batches, for NDJSON and CSV exports. */
export class ExportAuditEventsQuery {
  constructor(readonly filter: AuditFilter) {}
}

/** Recomputes the chain; with a checkpoint (a compact JWS from AuditCheckpointQuery), also checks the chain still reaches it. */
export class VerifyAuditTrailQuery {
  constructor(
    readonly tenantId: string,
    readonly checkpoint?: string,
  ) {}
}

export class AuditCheckpointQuery {
  constructor(readonly tenantId: string) {}
}

export class AuditMetricsQuery {
  constructor(
    readonly tenantId: string,
    readonly window: Window,
  ) {}
}

export class AuditGapsQuery {
  constructor(
    readonly tenantId: string,
    readonly window: Window,
  ) {}
}
