import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import type { ChangeStatus } from '../../../domain/governance/pending-change.aggregate';
import { ChangeNotFoundError } from '../../../domain/governance/pending-change.errors';
import type { Principal } from '../../../domain/shared/actor';
import { CLOCK, Clock } from '../../ports';
import { PENDING_CHANGES, PendingChangeRepository } from '../../ports/pending-change.port';
import { PendingChangeView, pendingChangeView } from '../../views/change.view';
import type { Page } from '../../views/views';

/** The tenant's pending changes of the control plane, newest first (admins and auditors; the controller checks). */
export class ListChangesQuery extends Query<Page<PendingChangeView>> {
  constructor(
    readonly principal: Principal,
    readonly filter: { cursor?: string; limit: number; status?: ChangeStatus },
  ) {
    super();
  }
}

export class GetChangeQuery extends Query<PendingChangeView> {
  constructor(
    readonly principal: Principal,
    readonly id: string,
  ) {
    super();
  }
}

@QueryHandler(ListChangesQuery)
export class ListChangesHandler implements IQueryHandler<ListChangesQuery> {
  constructor(
    @Inject(PENDING_CHANGES) private readonly changes: PendingChangeRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ principal: p, filter }: ListChangesQuery): Promise<Page<PendingChangeView>> {
    const now = this.clock.now();
    const { items, nextCursor } = await this.changes.list(p.tenant, filter, now);
    return { items: items.map((c) => pendingChangeView(c, now)), nextCursor };
  }
}

@QueryHandler(GetChangeQuery)
export class GetChangeHandler implements IQueryHandler<GetChangeQuery> {
  constructor(
    @Inject(PENDING_CHANGES) private readonly changes: PendingChangeRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ principal: p, id }: GetChangeQuery): Promise<PendingChangeView> {
    const change = await this.changes.find(p.tenant, id);
    if (!change) throw new ChangeNotFoundError(id);
    return pendingChangeView(change, this.clock.now());
  }
}
