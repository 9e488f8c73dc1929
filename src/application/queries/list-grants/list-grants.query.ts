import { Query } from '@nestjs/cqrs';
import type { Page } from '../../views/views';
import type { GrantView } from './grant.view';
import type { GrantStatus } from '../../../domain/grant/grant.aggregate';
import type { GrantScope } from '../../../domain/policy/approval-policy';
import type { Principal } from '../../../domain/shared/actor';

export class ListGrantsQuery extends Query<Page<GrantView>> {
  constructor(
    readonly principal: Principal,
    readonly filter: {
      cursor?: string;
      limit: number;
      toolName?: string;
      scope?: GrantScope;
      status: GrantStatus | 'all';
      /** `deny`: standing denies only; `allow`: grants only; absent: both. */
      effect?: 'allow' | 'deny';
    },
  ) {
    super();
  }
}
