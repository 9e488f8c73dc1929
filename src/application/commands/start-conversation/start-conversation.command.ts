import { Principal } from '../../../domain/shared/actor';
import { Command } from '@nestjs/cqrs';
import type { ConversationView } from '../../views/views';

export class StartConversationCommand extends Command<{ conversation: ConversationView; created: boolean }> {
  constructor(
    readonly principal: Principal,
    readonly input: {
      id?: string;
      /** `id` (with roles and name), the agent's word; or `token`, the user's own, verified (and `id`, if given, its sub). */
      user?: { id?: string; roles?: string[]; name?: string; token?: string };
      title?: string;
      metadata?: Record<string, unknown>;
    },
  ) {
    super();
  }
}
