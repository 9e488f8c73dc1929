import type { QueryBus } from '@nestjs/cqrs';
import { ReportResultCommand } from '../../application/commands/report-result/report-result.command';
import type { Principal } from '../../domain/shared/actor';
import { DomainError } from '../../domain/shared/domain-error';
import { ResultRequest } from './dto/tool-call.dto';
import { accessBeforeFaults, toolCallAccess } from './precedence';
import { fastAccepts } from './compiled-bodies';
import { parseBody } from './validation';

const FAST_RESULT = fastAccepts(ResultRequest);

const MAX_OUTPUT_BYTES = 64 * 1024;

/** A result's output is at most 64 KiB serialised (`413 too_large`); `at` names it among a proposal's results. */
export function mustFitOutput(output: unknown, at = 'output'): void {
  if (output !== undefined && Buffer.byteLength(JSON.stringify(output) ?? '') > MAX_OUTPUT_BYTES) {
    throw new DomainError('payload_too_large', 'too_large', `${at} is larger than 64 KiB once serialised`);
  }
}

/** POST /v1/tool-calls/{id}/result, Tollgate.ReportResult: the conversation's agent; output at most 64 KiB. */
export async function reportResult(
  queries: QueryBus,
  p: Principal,
  toolCallId: string,
  body: () => unknown,
): Promise<ReportResultCommand> {
  const dto = await accessBeforeFaults(
    () => {
      const dto = parseBody(ResultRequest, body(), FAST_RESULT);
      mustFitOutput(dto.output);
      return dto;
    },
    toolCallAccess(queries, p, toolCallId),
    (a) => a.isOwningAgent,
    () => "Only the conversation's agent may claim or report this tool call",
  );
  return new ReportResultCommand(p, toolCallId, { outcome: dto.outcome, output: dto.output, error: dto.error });
}
