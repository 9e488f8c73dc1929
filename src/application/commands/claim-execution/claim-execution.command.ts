import { Principal } from '../../../domain/shared/actor';

export class ClaimExecutionCommand {
  constructor(
    readonly principal: Principal,
    readonly toolCallId: string,
  ) {}
}
