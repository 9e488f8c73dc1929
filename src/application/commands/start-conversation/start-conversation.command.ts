import { Principal } from '../../../domain/shared/actor';

export class StartConversationCommand {
  constructor(
    readonly principal: Principal,
    readonly input: {
      id?: string;
      user?: { id: string; roles?: string[]; name?: string };
      title?: string;
      metadata?: Record<string, unknown>;
    },
  ) {}
}
