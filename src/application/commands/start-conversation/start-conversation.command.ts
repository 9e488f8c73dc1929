import { Principal } from '../../../domain/shared/actor';
import { ConversationUser } from '../../../domain/conversation/conversation.aggregate';

export class StartConversationCommand {
  constructor(
    readonly principal: Principal,
    readonly input: { id?: string; user?: ConversationUser; title?: string; metadata?: Record<string, unknown> },
  ) {}
}
