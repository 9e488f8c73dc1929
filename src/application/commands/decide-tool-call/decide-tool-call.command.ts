import { Decider, DecisionInput } from '../../../domain/conversation/conversation.aggregate';
import { Command } from '@nestjs/cqrs';
import type { ToolCallView } from '../../views/views';

/** always_allow only: what limits the standing grant it makes. */
export interface GrantOptions {
  /** Seconds the grant lives (1 s to 90 days); without it, until revoked. */
  expiresIn?: number;
  /** Argument name → glob: the grant covers only calls whose arguments match them all. */
  args?: Record<string, string>;
}

export class DecideToolCallCommand extends Command<ToolCallView> {
  constructor(
    readonly decider: Decider,
    readonly toolCallId: string,
    readonly input: DecisionInput,
    readonly grant: GrantOptions = {},
  ) {
    super();
  }
}
