import { Principal } from '../../../domain/shared/actor';
import { Command } from '@nestjs/cqrs';
import type { ToolCallView } from '../../views/views';

export class ReportResultCommand extends Command<ToolCallView> {
  constructor(
    readonly principal: Principal,
    readonly toolCallId: string,
    readonly result: { outcome: 'succeeded' | 'failed'; output?: unknown; error?: string },
  ) {
    super();
  }
}
