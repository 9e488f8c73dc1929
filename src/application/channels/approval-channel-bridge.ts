import type { AuditEvent } from '../ports/audit-log.port';
import type { ApprovalCallback, ApprovalOutcomeKind } from '../ports/approval-callback.port';
import type { OutboxConsumer } from '../ports/outbox.port';
import { PENDING, type Clock, type ConversationRepository } from '../ports';
import { toolCallView } from '../views/views';
import { NOTIFY_CHANNELS } from '../../domain/policy/policy-document';

/** A request that has ended and is older than this is not asked any more (a channel added to a running system). */
const STALE_REQUEST_MS = 10 * 60 * 1000;
/** An FYI older than this is not sent: stale news after a long outage, or history to a channel just enabled. */
const STALE_NOTICE_MS = 60 * 60 * 1000;

/** The events that end a pending request, and what each means to a person watching a channel. */
const OUTCOMES: Record<string, ApprovalOutcomeKind> = {
  ToolCallApproved: 'approved',
  ToolCallRejected: 'rejected',
  ToolCallExpired: 'expired',
  ToolCallCancelled: 'cancelled',
};

/**
 * Drives one ApprovalCallback from the transactional outbox, under its own cursor (the channel's name):
 * `ApprovalRequested` → `ask`, and the end of a pending request → `tell`. Only the ends of requests a person
 * was asked about are told: a policy denial never asked anyone, and cancelling an approved call does not end
 * a request. The call is read as it stands at delivery: a request delivered late (the channel was down) is
 * still asked, so the channel keeps a record, and its outcome follows in seq order; but one that ended more
 * than ten minutes ago is not (a channel enabled on a running system does not replay its history).
 */
export class ApprovalChannelBridge implements OutboxConsumer {
  readonly name: string;

  constructor(
    private readonly callback: ApprovalCallback,
    private readonly conversations: Pick<ConversationRepository, 'findByToolCallId'>,
    private readonly clock: Clock = { now: () => new Date() },
  ) {
    this.name = callback.channel;
  }

  wants(e: AuditEvent): boolean {
    if (!e.toolCallId) return false;
    // A rule that names its channels (`notify`) is asked on those only; channels outside the policy's list (the
    // terminal) always.
    if (e.type === 'ApprovalRequested') return this.named((e.data.notify as string[] | undefined) ?? undefined);
    if (e.type === 'ToolCallApprovalRecorded') return !!this.callback.progress;
    if (e.type === 'ToolCallReminded') return !!this.callback.remind;
    // A channel the event does not name is not told; one outside the policy's list (the terminal) is.
    if (e.type === 'ToolCallNotified')
      return (
        !!this.callback.notify &&
        (!isNotifyChannel(this.callback.channel) ||
          ((e.data.channels as string[] | undefined) ?? []).includes(this.callback.channel))
      );
    if (e.type === 'ToolCallEscalated')
      return !!this.callback.remind && ((e.data.notify as string[] | undefined) ?? []).includes(this.callback.channel);
    if (!(e.type in OUTCOMES)) return false;
    if (e.type === 'ToolCallRejected' && e.data.via === 'policy') return false;
    if (e.type === 'ToolCallCancelled' && e.data.previousStatus !== 'pending') return false;
    return true;
  }

  private named(channels: string[] | undefined): boolean {
    return !channels || !isNotifyChannel(this.callback.channel) || channels.includes(this.callback.channel);
  }

  async deliver(e: AuditEvent): Promise<void> {
    const toolCallId = e.toolCallId!;
    const conv = await this.conversations.findByToolCallId(e.tenant, toolCallId, {
      calls: { statuses: PENDING, ids: [toolCallId] },
    });
    const call = conv?.findCall(toolCallId);
    if (!conv || !call) return; // purged with its history: nothing left to show
    const toolCall = toolCallView(call.snapshot());
    const request = {
      ...toolCall,
      tenantId: e.tenant,
      conversation: { id: conv.id, agentId: conv.agentId, user: conv.user, title: conv.title ?? null },
    };
    if (e.type === 'ApprovalRequested') {
      if (toolCall.status !== 'pending' && this.clock.now().getTime() - Date.parse(e.at) > STALE_REQUEST_MS) return;
      await this.callback.ask(request);
      return;
    }
    if (e.type === 'ToolCallEscalated' || e.type === 'ToolCallReminded') {
      if (toolCall.status !== 'pending') return; // decided meanwhile: nothing to remind of
      // A reminder goes where the request went; an escalation step names its own channels (wants).
      if (e.type === 'ToolCallReminded' && !this.named(toolCall.approval?.notify)) return;
      const text =
        e.type === 'ToolCallEscalated'
          ? `Escalated after ${e.data.afterSeconds} s without a decision: ${((e.data.approvers as string[]) ?? []).join(', ')} may now decide it`
          : `Reminder: this request expires in ${Math.max(1, Math.round(Number(e.data.secondsLeft) / 60))} min unless someone decides it`;
      await this.callback.remind?.(request, { kind: e.type === 'ToolCallEscalated' ? 'escalated' : 'reminder', text });
      return;
    }
    if (e.type === 'ToolCallNotified') {
      if (this.clock.now().getTime() - Date.parse(e.at) > STALE_NOTICE_MS) return;
      await this.callback.notify?.(request, { approvers: [...((e.data.approvers as string[] | undefined) ?? [])] });
      return;
    }
    if (e.type === 'ToolCallApprovalRecorded') {
      // Progress on a request that has since ended is shown by its outcome instead.
      if (toolCall.status === 'pending' && this.named(toolCall.approval?.notify))
        await this.callback.progress?.(request);
      return;
    }
    const actor = e.actor as { id?: string; name?: string; via?: string; onBehalfOf?: { id: string; name?: string } };
    const reason = typeof e.data.reason === 'string' ? e.data.reason : undefined;
    await this.callback.tell({
      tenantId: e.tenant,
      outcome: OUTCOMES[e.type],
      toolCall,
      by: {
        id: actor.id ?? 'system',
        ...(actor.name ? { name: actor.name } : {}),
        via: actor.via ?? 'system',
        ...(actor.onBehalfOf ? { onBehalfOf: actor.onBehalfOf } : {}),
      },
      ...(reason !== undefined ? { reason } : {}),
    });
  }
}

const isNotifyChannel = (c: string) => (NOTIFY_CHANNELS as readonly string[]).includes(c);

/** One bridge per registered channel. */
export function approvalChannelBridges(
  callbacks: ApprovalCallback[],
  conversations: Pick<ConversationRepository, 'findByToolCallId'>,
  clock?: Clock,
): OutboxConsumer[] {
  return callbacks.map((c) => new ApprovalChannelBridge(c, conversations, clock));
}
