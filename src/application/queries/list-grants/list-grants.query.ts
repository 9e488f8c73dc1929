import type { GrantStatus } from '../../../domain/grant/grant.aggregate';
import type { GrantScope } from '../../../domain/policy/approval-policy';
import type { Principal } from '../../../domain/shared/actor';

export class ListGrantsQuery {
  constructor(
    readonly principal: Principal,
    readonly filter: {
      cursor?: string;
      limit: number;
      toolName?: string;
      scope?: GrantScope;
      status: GrantStatus | 'all';
    },
  ) {}
}
