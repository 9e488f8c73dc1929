import { Principal } from '../../../domain/shared/actor';

export class GetToolCallQuery {
  constructor(readonly principal: Principal, readonly toolCallId: string, readonly waitSeconds = 0) {}
}
