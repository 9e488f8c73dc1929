import { Inject, Optional } from '@nestjs/common';
import { CommandBus, IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { delegatorsToRead, visibleCall } from '../../access';
import { DelegatedAuthority } from '../../persons/delegated-authority';
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
    // Without it a delegate reads only what their own rights show them (fail closed).
    @Optional() private readonly delegated?: DelegatedAuthority,
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
      const loaded = await this.conversations.findByToolCallId(p.tenant, toolCallId);
      // A delegate reads the held calls their delegators may decide (looked up only when their own rights do not).
      const delegated = this.delegated;
      const delegators = await delegatorsToRead(
        loaded,
        p,
        toolCallId,
        delegated && (() => delegated.of(p, this.clock.now())),
      );
      const conv = visibleCall(loaded, p, toolCallId, delegators);
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
