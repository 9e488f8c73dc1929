import { Query } from '@nestjs/cqrs';
import type { ToolCallView } from '../../views/views';
import { Principal } from '../../../domain/shared/actor';

export class GetToolCallQuery extends Query<ToolCallView> {
  /** `signal` aborts the wait when the client has gone away: the waiter is freed at once. */
  constructor(
    readonly principal: Principal,
    readonly toolCallId: string,
    readonly waitSeconds = 0,
    readonly signal?: AbortSignal,
  ) {
    super();
  }
}
