import type { QueryBus } from '@nestjs/cqrs';
import { AskQuestionCommand } from '../../application/commands/questions/question.commands';
import type { Principal } from '../../domain/shared/actor';
import { AskQuestionRequest } from './dto/question.dto';
import { accessBeforeFaults, conversationAccess } from './precedence';
import { parseBody } from './validation';

/** POST /v1/conversations/{id}/questions, Tollgate.AskQuestion: a bad body is a 400 only for the conversation's agent. */
export async function askQuestion(
  queries: QueryBus,
  p: Principal,
  conversationId: string,
  body: () => unknown,
): Promise<AskQuestionCommand> {
  const dto = await accessBeforeFaults(
    () => parseBody(AskQuestionRequest, body()),
    conversationAccess(queries, p, conversationId),
    (a) => a.isOwningAgent,
    () => 'Only the agent that started this conversation may ask questions in it',
  );
  const { text, choices, allowFreeText, timeoutSeconds, askTo } = dto;
  return new AskQuestionCommand(p, conversationId, { text, choices, allowFreeText, timeoutSeconds, askTo }, dto.id);
}
