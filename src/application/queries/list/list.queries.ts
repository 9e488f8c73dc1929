import { Principal } from '../../../domain/shared/actor';

export class ListConversationsQuery {
  constructor(
    readonly principal: Principal,
    readonly filter: { status?: 'active' | 'blocked' | 'halted'; cursor?: string; limit: number },
  ) {}
}

export class ListApprovalsQuery {
  constructor(
    readonly principal: Principal,
    readonly filter: { status: string; cursor?: string; limit: number },
  ) {}
}

export class ListToolsQuery {
  constructor(
    readonly principal: Principal,
    readonly filter: { cursor?: string; limit: number },
  ) {}
}
