import { Principal } from '../../../domain/shared/actor';

export class GetConversationQuery {
  constructor(
    readonly principal: Principal,
    readonly conversationId: string,
  ) {}
}
