import type { QueryBus } from '@nestjs/cqrs';
import { AnswerQuestionCommand } from '../../application/commands/questions/question.commands';
import type { Channel, Principal } from '../../domain/shared/actor';
import { AnswerQuestionRequest } from './dto/question.dto';
import { accessBeforeFaults, questionAccess } from './precedence';
import { parseBody } from './validation';

/**
 * POST /v1/questions/{id}/answer, Tollgate.AnswerQuestion. The command checks visibility (404), the right to
 * answer (403) and the answer itself (400) again, in its transaction.
 */
export async function answerQuestion(
  queries: QueryBus,
  p: Principal,
  questionId: string,
  read: () => { body: unknown; via: () => Channel },
): Promise<AnswerQuestionCommand> {
  return accessBeforeFaults(
    () => {
      const { body, via } = read();
      const dto = parseBody(AnswerQuestionRequest, body);
      return new AnswerQuestionCommand(p, questionId, dto.answer, via());
    },
    questionAccess(queries, p, questionId),
    (a) => a.mayAnswer,
    (a) =>
      a.isAgent
        ? 'Agent tokens cannot answer questions: answers come from people'
        : 'Your roles may not answer this question',
  );
}
