import { Channel, Principal } from '../../../domain/shared/actor';
import { HaltTarget } from '../../../domain/halt/halt.aggregate';

/** Kill switch: stop new proposals and claims in a scope and cancel what has not run. */
export class HaltCommand {
  /** `via`: the channel the person pulled it from (the audit record's `actor.via`). */
  constructor(
    readonly principal: Principal,
    readonly target: HaltTarget,
    readonly reason: string,
    readonly via: Channel = 'api',
  ) {}
}

export class ResumeCommand {
  constructor(
    readonly principal: Principal,
    readonly target: HaltTarget,
    readonly reason?: string,
    readonly via: Channel = 'api',
  ) {}
}
