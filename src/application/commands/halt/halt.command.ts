import { Channel, Principal } from '../../../domain/shared/actor';
import { HaltTarget } from '../../../domain/halt/halt.aggregate';
import { Command } from '@nestjs/cqrs';
import type { haltView } from '../../views/views';
import type { PendingChangeView } from '../../views/change.view';

/** A halt as it stands, whether this command made it (`changed`), and the calls it cancelled. */
export type HaltResult = ReturnType<typeof haltView> & {
  halted: boolean;
  changed: boolean;
  cancelledToolCallIds: string[];
};

/** The scope resumed; `changed` is false when it was not halted. */
export interface ResumeResult {
  scope: HaltTarget['scope'];
  id: string | null;
  halted: boolean;
  changed: boolean;
  /** Governance (four eyes) held the resume for another admin: the halt stands meanwhile. */
  pendingChange?: PendingChangeView;
}

/** Kill switch: stop new proposals and claims in a scope and cancel what has not run. */
export class HaltCommand extends Command<HaltResult> {
  /** `via`: the channel the person pulled it from (the audit record's `actor.via`). */
  constructor(
    readonly principal: Principal,
    readonly target: HaltTarget,
    readonly reason: string,
    readonly via: Channel = 'api',
  ) {
    super();
  }
}

export class ResumeCommand extends Command<ResumeResult> {
  constructor(
    readonly principal: Principal,
    readonly target: HaltTarget,
    readonly reason?: string,
    readonly via: Channel = 'api',
    /** Applying this approved pending change: no gate. */
    readonly approvedChange?: string,
  ) {
    super();
  }
}
