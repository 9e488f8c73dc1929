import { StartConversationCommand } from '../../application/commands/start-conversation/start-conversation.command';
import type { Principal } from '../../domain/shared/actor';
import { ValidationError, ValidationFault } from '../../domain/shared/domain-error';
import { StartConversationRequest } from './dto/conversation.dto';
import { parseBody } from './validation';

/** POST /v1/conversations, Tollgate.StartConversation: any agent may start one, so the body is the only check. */
export function startConversation(p: Principal, body: unknown): StartConversationCommand {
  const input = parseBody(StartConversationRequest, body ?? {});
  const user = input.user;
  if (user) {
    const faults: ValidationFault[] = [];
    if (user.token === undefined && user.id === undefined)
      faults.push({ path: 'user.id', message: 'is required unless user.token is given' });
    // A verified user's roles and name are the token's: the agent's word beside them would be read as verified.
    if (user.token !== undefined && user.roles !== undefined)
      faults.push({ path: 'user.roles', message: 'comes from user.token: leave it out' });
    if (user.token !== undefined && user.name !== undefined)
      faults.push({ path: 'user.name', message: 'comes from user.token: leave it out' });
    if (faults.length > 0) throw new ValidationError(faults);
  }
  return new StartConversationCommand(p, input);
}
