import { Query } from '@nestjs/cqrs';
import type { ConversationView } from '../../views/views';
import { Principal } from '../../../domain/shared/actor';

export class GetConversationQuery extends Query<ConversationView> {
  constructor(
    readonly principal: Principal,
    readonly conversationId: string,
  ) {
    super();
  }
}
