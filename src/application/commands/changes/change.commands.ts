import { Command } from '@nestjs/cqrs';
import type { Channel, Principal } from '../../../domain/shared/actor';
import type { PendingChangeView } from '../../views/change.view';

/** Result of an approval: the change as it stands, and (once applied) what applying it answered. */
export interface ApproveChangeResult {
  change: PendingChangeView;
  applied: boolean;
  /** The applied request's own answer (the new policy version, the resumed scope, the webhook, the grant). */
  result?: unknown;
}

/** Another admin approves a pending change; at its quorum it is applied, once, as the original request would have been. */
export class ApproveChangeCommand extends Command<ApproveChangeResult> {
  constructor(
    readonly principal: Principal,
    readonly id: string,
    readonly via: Channel = 'api',
  ) {
    super();
  }
}

/** Any admin ends a pending change (its proposer too: withdrawing it). */
export class RejectChangeCommand extends Command<PendingChangeView> {
  constructor(
    readonly principal: Principal,
    readonly id: string,
    readonly reason?: string,
    readonly via: Channel = 'api',
  ) {
    super();
  }
}

/** The sweeper: records ChangeExpired for pending changes past their deadline. Answers how many. */
export class ExpireChangesCommand extends Command<number> {}
