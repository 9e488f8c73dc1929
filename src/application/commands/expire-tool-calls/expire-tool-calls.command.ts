import { Command } from '@nestjs/cqrs';
/** Expires pending calls past their `expiresAt`: from the sweeper for all tenants, or for one conversation on read. */
/** Answers how many calls expired. */
export class ExpireToolCallsCommand extends Command<number> {
  constructor(readonly target?: { tenantId: string; conversationId: string }) {
    super();
  }
}
