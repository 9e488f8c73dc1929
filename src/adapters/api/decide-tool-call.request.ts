import type { QueryBus } from '@nestjs/cqrs';
import { DecideToolCallCommand } from '../../application/commands/decide-tool-call/decide-tool-call.command';
import type { Channel, Principal } from '../../domain/shared/actor';
import { DecisionRequest } from './dto/tool-call.dto';
import { accessBeforeFaults, toolCallAccess } from './precedence';
import { parseBody } from './validation';

/**
 * POST /v1/tool-calls/{id}/decision, Tollgate.DecideToolCall. The body, the channel and the command's own field
 * rules (DecideToolCallCommand.mustFit) are checked after the 404 and 403; the command checks visibility and the
 * right to decide again, in its transaction.
 */
export async function decideToolCall(
  queries: QueryBus,
  p: Principal,
  toolCallId: string,
  read: () => { body: unknown; via: () => Channel },
): Promise<DecideToolCallCommand> {
  return accessBeforeFaults(
    () => {
      const { body, via } = read();
      const dto = parseBody(DecisionRequest, body);
      const decider = { ...p, via: via() };
      const input = {
        decision: dto.decision,
        reason: dto.reason,
        arguments: dto.arguments,
        scope: dto.scope,
        ...(dto.response !== undefined ? { response: dto.response } : {}),
      };
      const grant = { expiresIn: dto.expiresIn, args: dto.args, ...(dto.uses !== undefined ? { uses: dto.uses } : {}) };
      DecideToolCallCommand.mustFit(input, grant);
      return new DecideToolCallCommand(decider, toolCallId, input, grant, dto.stepUp?.passkey);
    },
    toolCallAccess(queries, p, toolCallId),
    (a) => a.mayDecide,
    (a) =>
      a.isAgent
        ? 'Agent tokens cannot decide tool calls: approval comes from people'
        : 'Your roles may not decide this tool call',
  );
}
