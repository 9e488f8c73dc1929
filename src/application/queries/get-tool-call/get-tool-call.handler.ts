import { Inject } from '@nestjs/common';
import { CommandBus, IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { visibleCall } from '../../access';
import { ExpireToolCallsCommand } from '../../commands/expire-tool-calls/expire-tool-calls.command';
import { CLOCK, Clock, CONVERSATIONS, ConversationRepository, WAITERS, ToolCallWaiters } from '../../ports';
import { ToolCallView, toolCallView } from '../../views/views';
import { GetToolCallQuery } from './get-tool-call.query';

@QueryHandler(GetToolCallQuery)
export class GetToolCallHandler implements IQueryHandler<GetToolCallQuery, ToolCallView> {
  constructor(
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(WAITERS) private readonly waiters: ToolCallWaiters,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly commands: CommandBus,
  ) {}

  async execute({ principal: p, toolCallId, waitSeconds, signal }: GetToolCallQuery): Promise<ToolCallView> {
    const deadline = this.clock.now().getTime() + waitSeconds * 1000;
    const watch = this.waiters.watch(p.tenant, toolCallId);
    try {
      for (;;) {
        // Only the small answer of `read` lives across the wait: ten thousand idle polls hold no aggregates.
        const { view, pending, expiresAt } = await this.read(p, toolCallId);
        const now = this.clock.now().getTime();
        const left = deadline - now;
        if (!pending || left <= 0 || this.waiters.closing || signal?.aborted) return view;
        // Woken after a commit here, by a notification from another instance, or by the periodic batch re-check.
        await watch.next(Math.max(1, Math.min(left, expiresAt !== undefined ? expiresAt - now + 1 : left)), signal);
      }
    } finally {
      watch.close();
    }
  }

  private async read(
    p: GetToolCallQuery['principal'],
    toolCallId: string,
  ): Promise<{ view: ToolCallView; pending: boolean; expiresAt?: number }> {
    for (;;) {
      const conv = visibleCall(await this.conversations.findByToolCallId(p.tenant, toolCallId), p, toolCallId);
      const call = conv.findCall(toolCallId)!;
      if (call.isExpiredAt(this.clock.now())) {
        // Check on read: an expired call is shown expired even before the sweeper passes.
        await this.commands.execute(new ExpireToolCallsCommand({ tenantId: p.tenant, conversationId: conv.id }));
        continue;
      }
      return {
        view: toolCallView(call.snapshot()),
        pending: call.status === 'pending',
        expiresAt: call.approval?.expiresAt.getTime(),
      };
    }
  }
}
