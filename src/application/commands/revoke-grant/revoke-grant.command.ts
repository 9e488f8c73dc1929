import type { Channel, Principal } from '../../../domain/shared/actor';

export class RevokeGrantCommand {
  constructor(
    readonly principal: Principal,
    readonly grantId: string,
    readonly reason: string | undefined,
    readonly via: Channel,
  ) {}
}
