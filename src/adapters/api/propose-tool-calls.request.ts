import type { QueryBus } from '@nestjs/cqrs';
import { ProposeToolCallsCommand } from '../../application/commands/propose-tool-calls/propose-tool-calls.command';
import type { Principal } from '../../domain/shared/actor';
import { ProposeToolCallsRequest, proposedCalls } from './dto/tool-call.dto';
import { accessBeforeFaults, conversationAccess } from './precedence';
import { fastAccepts } from './compiled-bodies';
import { mustFitOutput } from './report-result.request';
import { parseBody } from './validation';

const FAST_PROPOSAL = fastAccepts(ProposeToolCallsRequest);

/**
 * POST /v1/conversations/{id}/tool-calls, Tollgate.ProposeToolCalls. A bad body is a 400 only for the
 * conversation's agent; the command checks visibility (404) and ownership (403) in its own transaction.
 */
export async function proposeToolCalls(
  queries: QueryBus,
  p: Principal,
  conversationId: string,
  body: () => unknown,
): Promise<ProposeToolCallsCommand> {
  const dto = await accessBeforeFaults(
    () => {
      const dto = parseBody(ProposeToolCallsRequest, body(), FAST_PROPOSAL);
      dto.results?.forEach((r, i) => mustFitOutput(r.output, `results[${i}].output`));
      return dto;
    },
    conversationAccess(queries, p, conversationId),
    (a) => a.isOwningAgent,
    () => 'Only the agent that started this conversation may propose tool calls in it',
  );
  const results = (dto.results ?? []).map(({ toolCallId, outcome, output, error }) => ({
    toolCallId,
    outcome,
    ...(output !== undefined ? { output } : {}),
    ...(error !== undefined ? { error } : {}),
  }));
  return new ProposeToolCallsCommand(p, conversationId, proposedCalls(dto), dto.claim === true, dto.claimKey, results);
}
