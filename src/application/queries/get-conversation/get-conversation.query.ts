import { Query } from '@nestjs/cqrs';
import type { ConversationView } from '../../views/views';
import { Principal } from '../../../domain/shared/actor';

export class GetConversationQuery extends Query<ConversationView> {
  constructor(
    readonly principal: Principal,
    readonly conversationId: string,
    /** Only the calls of these external ids (1 to 64, checked by the request module); all calls without it. */
    readonly externalIds?: readonly string[],
  ) {
    super();
  }
}
