import { Inject, Injectable, Logger } from '@nestjs/common';
import type { WebClient } from '@slack/web-api';
import type {
  ApprovalCallback,
  ApprovalOutcome,
  ApprovalRequest,
} from '../../application/ports/approval-callback.port';
import { Deciders } from '../../application/persons/deciders';
import { personAssignee } from '../../domain/policy/assignee';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import { slackRoutes } from '../../infrastructure/config/slack-config';
import { type MessageLinks, notifyMessage, outcomeMessage, requestMessage, type SlackBlock } from './slack-blocks';
import { isCurable, SLACK_CLIENT, slackPlatformError } from './slack-client';
import { SlackDirectMessages } from './slack-direct';
import { SlackMessageStore } from './slack-messages.store';

/**
 * Slack as an approval channel: a Block Kit message per request in SLACK_CHANNEL, updated with the outcome
 * whichever channel (or the clock, or a halt) ended it. Clicks come back through SlackInteractions. Only the
 * requests of the tenants Slack serves are shown, each in its tenant's channel (TOLLGATE_SLACK_TENANT with
 * SLACK_CHANNEL, or TOLLGATE_SLACK_TENANTS).
 */
@Injectable()
export class SlackApprovalCallback implements ApprovalCallback {
  readonly channel = 'slack';
  private readonly log = new Logger('Slack');

  constructor(
    @Inject(SLACK_CLIENT) private readonly slack: WebClient,
    private readonly messages: SlackMessageStore,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
    private readonly direct: SlackDirectMessages,
    private readonly deciders: Deciders,
  ) {}

  /** Where a message links to a call's card (TOLLGATE_PUBLIC_URL); unset, messages name the call's id instead. */
  private get links(): MessageLinks {
    return { publicUrl: this.config.publicUrl };
  }

  /** The channel a tenant's requests go to; undefined for tenants Slack does not serve. */
  private channelOf(tenant: string): string | undefined {
    const routes = slackRoutes(this.config.slack!);
    return Object.hasOwn(routes, tenant) ? routes[tenant] : undefined;
  }

  async ask(r: ApprovalRequest): Promise<void> {
    if (!this.channelOf(r.tenantId)) return;
    await this.post(r, requestMessage(r, this.links, await this.namedSlackUsers(r)), 'chat.postMessage');
    await this.direct.ask(r);
  }

  /** The Slack users linked to the people the call names (`person:`, signed in recently), mentioned so Slack notifies exactly them. */
  private async namedSlackUsers(r: ApprovalRequest): Promise<string[]> {
    if (!(r.approval?.approvers ?? []).some((a) => personAssignee(a) !== undefined)) return [];
    const ids = (await this.deciders.named(r, this.config.personMaxAgeSeconds)).map((p) => p.id);
    if (ids.length === 0) return [];
    return this.direct.usersOf(r.tenantId, ids);
  }

  /**
   * Posts a request's message once (a redelivery finds it posted) and remembers where, so later outcomes update
   * it. A refusal no retry can cure is logged and passed over, so the stream moves on. False when nothing was posted.
   */
  private async post(
    r: ApprovalRequest,
    message: { text: string; blocks: SlackBlock[] },
    what: string,
  ): Promise<boolean> {
    const channel = this.channelOf(r.tenantId);
    if (!channel) return false;
    if (await this.messages.find(r.tenantId, r.id)) return false; // redelivered: posted already
    let posted: { channel?: string; ts?: string };
    try {
      posted = await this.slack.chat.postMessage({
        channel,
        text: message.text,
        blocks: message.blocks,
        unfurl_links: false,
        unfurl_media: false,
      });
    } catch (e) {
      if (isCurable(e)) throw e;
      this.log.error(`${what} for ${r.id} refused (${slackPlatformError(e)}); not retried`);
      return false;
    }
    if (!posted.channel || !posted.ts) throw new Error('chat.postMessage answered without channel and ts');
    await this.messages.save(r.tenantId, r.id, {
      channelId: posted.channel,
      ts: posted.ts,
      conversation: r.conversation,
    });
    return true;
  }

  /** An approval towards a quorum: the same message, buttons kept, now saying "1 of 2". */
  async progress(r: ApprovalRequest): Promise<void> {
    if (!this.channelOf(r.tenantId)) return;
    const ref = await this.messages.find(r.tenantId, r.id);
    if (!ref || ref.outcome) return;
    const message = requestMessage(r, this.links, await this.namedSlackUsers(r));
    try {
      await this.slack.chat.update({ channel: ref.channelId, ts: ref.ts, text: message.text, blocks: message.blocks });
    } catch (e) {
      if (isCurable(e)) throw e;
      this.log.warn(`chat.update for ${r.id} refused (${slackPlatformError(e)}); not retried`);
    }
  }

  /** Escalations (when the step names slack) and reminders: a reply in the request's thread, so the channel sees it. */
  async remind(r: ApprovalRequest, note: { kind: 'escalated' | 'reminder'; text: string }): Promise<void> {
    if (!this.channelOf(r.tenantId)) return;
    const ref = await this.messages.find(r.tenantId, r.id);
    if (!ref || ref.outcome) return;
    try {
      await this.slack.chat.postMessage({
        channel: ref.channelId,
        thread_ts: ref.ts,
        reply_broadcast: note.kind === 'escalated',
        text: `${note.kind === 'escalated' ? ':rotating_light:' : ':alarm_clock:'} ${note.text}`,
        unfurl_links: false,
        unfurl_media: false,
      });
    } catch (e) {
      if (isCurable(e)) throw e;
      this.log.warn(`chat.postMessage (${note.kind}) for ${r.id} refused (${slackPlatformError(e)}); not retried`);
    }
  }

  /**
   * A `notify` call ran at once: an FYI without buttons, never updated later. The message is recorded like a
   * request's (with its outcome already set), so a redelivery posts it once and an outcome never touches it.
   */
  async notify(r: ApprovalRequest, told: { approvers: string[] }): Promise<void> {
    if (await this.post(r, notifyMessage(r, told.approvers, this.links), 'chat.postMessage (notify)'))
      await this.messages.markOutcome(r.tenantId, r.id, 'approved');
  }

  async tell(o: ApprovalOutcome): Promise<void> {
    if (!this.channelOf(o.tenantId)) return;
    const ref = await this.messages.find(o.tenantId, o.toolCall.id);
    if (!ref || ref.outcome === o.outcome) return; // never posted (see ask), or updated already
    const message = outcomeMessage(o, ref.conversation ?? undefined, this.links);
    try {
      await this.slack.chat.update({ channel: ref.channelId, ts: ref.ts, text: message.text, blocks: message.blocks });
    } catch (e) {
      if (isCurable(e)) throw e;
      this.log.warn(`chat.update for ${o.toolCall.id} refused (${slackPlatformError(e)}); not retried`);
    }
    await this.messages.markOutcome(o.tenantId, o.toolCall.id, o.outcome);
  }
}
