import type { Channel, Principal } from '../../../domain/shared/actor';
import { Command } from '@nestjs/cqrs';
import type { GrantView } from '../../queries/list-grants/grant.view';

export class RevokeGrantCommand extends Command<GrantView> {
  constructor(
    readonly principal: Principal,
    readonly grantId: string,
    readonly reason: string | undefined,
    readonly via: Channel,
  ) {
    super();
  }
}
