import { Actor } from '../../../domain/shared/actor';
import { Command } from '@nestjs/cqrs';
import type { policyView } from '../../views/views';

export class RollBackPolicyCommand extends Command<ReturnType<typeof policyView>> {
  constructor(
    readonly tenantId: string,
    readonly by: Actor,
    /** The earlier version whose document becomes a new version. */
    readonly version: number,
    readonly reason?: string,
  ) {
    super();
  }
}
