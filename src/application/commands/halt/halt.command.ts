import { Principal } from '../../../domain/shared/actor';
import { HaltTarget } from '../../../domain/halt/halt.aggregate';

/** Kill switch: stop new proposals and claims in a scope and cancel what has not run. */
export class HaltCommand {
  constructor(readonly principal: Principal, readonly target: HaltTarget, readonly reason: string) {}
}

export class ResumeCommand {
  constructor(readonly principal: Principal, readonly target: HaltTarget, readonly reason?: string) {}
}
