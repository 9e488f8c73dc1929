import { Principal } from '../../../domain/shared/actor';

export class GetToolCallQuery {
  /** `signal` aborts the wait when the client has gone away: the waiter is freed at once. */
  constructor(
    readonly principal: Principal,
    readonly toolCallId: string,
    readonly waitSeconds = 0,
    readonly signal?: AbortSignal,
  ) {}
}
