import { Principal } from '../../../domain/shared/actor';
import { Command } from '@nestjs/cqrs';
import type { ToolCallView } from '../../views/views';

/** What a claim answers: the call, the arguments to run (edited or not) and the backend's signed receipt. */
export interface ExecutionClaim {
  toolCall: ToolCallView;
  arguments: Record<string, unknown>;
  receipt: string;
}

export class ClaimExecutionCommand extends Command<ExecutionClaim> {
  constructor(
    readonly principal: Principal,
    readonly toolCallId: string,
  ) {
    super();
  }
}
