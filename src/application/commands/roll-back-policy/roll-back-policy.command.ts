import { Actor } from '../../../domain/shared/actor';

export class RollBackPolicyCommand {
  constructor(
    readonly tenantId: string,
    readonly by: Actor,
    /** The earlier version whose document becomes a new version. */
    readonly version: number,
    readonly reason?: string,
  ) {}
}
