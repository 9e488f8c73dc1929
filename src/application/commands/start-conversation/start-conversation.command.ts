import { Principal } from '../../../domain/shared/actor';
import { Command } from '@nestjs/cqrs';
import type { ConversationView } from '../../views/views';

export class StartConversationCommand extends Command<{ conversation: ConversationView; created: boolean }> {
  constructor(
    readonly principal: Principal,
    readonly input: {
      id?: string;
      user?: { id: string; roles?: string[]; name?: string };
      title?: string;
      metadata?: Record<string, unknown>;
    },
  ) {
    super();
  }
}
