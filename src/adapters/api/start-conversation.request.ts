import { StartConversationCommand } from '../../application/commands/start-conversation/start-conversation.command';
import type { Principal } from '../../domain/shared/actor';
import { StartConversationRequest } from './dto/conversation.dto';
import { parseBody } from './validation';

/** POST /v1/conversations, Tollgate.StartConversation: any agent may start one, so the body is the only check. */
export function startConversation(p: Principal, body: unknown): StartConversationCommand {
  return new StartConversationCommand(p, parseBody(StartConversationRequest, body ?? {}));
}
