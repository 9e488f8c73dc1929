import { INestApplicationContext } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApprovalChannelBridge } from '../../../application/channels/approval-channel-bridge';
import { DecideToolCallCommand } from '../../../application/commands/decide-tool-call/decide-tool-call.command';
import { CLOCK, Clock, CONVERSATIONS, ConversationRepository } from '../../../application/ports';
import type { OutboxConsumer } from '../../../application/ports/outbox.port';
import { GetToolCallQuery } from '../../../application/queries/get-tool-call/get-tool-call.query';
import { ListApprovalsQuery } from '../../../application/queries/list/list.queries';
import type { ToolCallView } from '../../../application/views/views';
import type { Decider } from '../../../domain/conversation/conversation.aggregate';
import { TerminalApprovalCallback, TerminalDecision, TerminalDecisions } from './terminal-approval-callback';
import { passkeyCardUrl } from '../client/passkey-link';

type Io = ConstructorParameters<typeof TerminalApprovalCallback>[1];

/**
 * `serve --approve-in-terminal`: the terminal's ApprovalCallback, driven from the transactional outbox by the
 * shared ApprovalChannelBridge (ApprovalRequested → ask, the end of a request → tell), and answering through
 * the same DecideToolCallCommand as every channel, as `decider` (via `cli`).
 *
 * The bridge is handed to `startServer` before the app exists (as an extra outbox consumer), so it reaches
 * the application through ports that wait for `attach(app)`; deliveries before that wait (at most 10 s, then
 * the outbox retries them).
 */
export class TerminalChannel implements TerminalDecisions {
  readonly callback: TerminalApprovalCallback;
  readonly consumer: OutboxConsumer;
  private app?: { commands: CommandBus; queries: QueryBus; conversations: ConversationRepository; clock: Clock };
  private attached!: () => void;
  /** Where people open the web inbox (TOLLGATE_PUBLIC_URL, else the server's own URL), once the server listens. */
  private inboxUrl?: string;
  private readonly ready = new Promise<void>((resolve) => (this.attached = resolve));

  constructor(
    readonly decider: Decider,
    io?: Io,
  ) {
    this.callback = new TerminalApprovalCallback(this, io, decider.tenant);
    const conversations: Pick<ConversationRepository, 'findByToolCallId'> = {
      findByToolCallId: async (...args) => (await this.started()).conversations.findByToolCallId(...args),
    };
    this.consumer = new ApprovalChannelBridge(this.callback, conversations, {
      now: () => this.app?.clock.now() ?? new Date(),
    });
  }

  /**
   * Once the app is up: take its buses, and ask what is already pending (the outbox brings only what is new to this
   * channel). `inboxUrl`: where the web inbox is, for links to a call's card.
   */
  async attach(app: INestApplicationContext, inboxUrl?: string): Promise<void> {
    this.inboxUrl = inboxUrl;
    this.app = {
      commands: app.get(CommandBus),
      queries: app.get(QueryBus),
      conversations: app.get(CONVERSATIONS),
      clock: app.get(CLOCK),
    };
    this.attached();
    let cursor: string | undefined;
    do {
      const page = await this.app.queries.execute(
        new ListApprovalsQuery(this.decider, { status: 'pending', cursor, limit: 1000 }),
      );
      for (const a of page.items) await this.callback.ask({ ...a, tenantId: this.decider.tenant });
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  cardUrl(toolCallId: string): string | undefined {
    return this.inboxUrl ? passkeyCardUrl(this.inboxUrl, toolCallId) : undefined;
  }

  async isPending(toolCallId: string): Promise<boolean> {
    const { queries } = await this.started();
    const call = await queries.execute(new GetToolCallQuery(this.decider, toolCallId));
    return call.status === 'pending';
  }

  async decide(toolCallId: string, input: TerminalDecision): Promise<ToolCallView> {
    const { commands } = await this.started();
    return commands.execute(new DecideToolCallCommand(this.decider, toolCallId, input));
  }

  close(): void {
    this.callback.close();
  }

  private async started(): Promise<NonNullable<TerminalChannel['app']>> {
    if (this.app) return this.app;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the terminal is not attached yet')), 10_000);
      timer.unref();
    });
    await Promise.race([this.ready, late]).finally(() => clearTimeout(timer));
    return this.app!;
  }
}
