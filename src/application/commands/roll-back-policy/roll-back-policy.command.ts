import { Actor } from '../../../domain/shared/actor';
import { Command } from '@nestjs/cqrs';
import type { policyView } from '../../views/views';
import type { HeldForApproval } from '../../views/change.view';

/** The new version in force; under governance (four eyes), the version in force with the pending change. */
export class RollBackPolicyCommand extends Command<ReturnType<typeof policyView> & Partial<HeldForApproval>> {
  constructor(
    readonly tenantId: string,
    readonly by: Actor,
    /** The earlier version whose document becomes a new version. */
    readonly version: number,
    readonly reason?: string,
    /** Applying this approved pending change: no gate. */
    readonly approvedChange?: string,
  ) {
    super();
  }
}
