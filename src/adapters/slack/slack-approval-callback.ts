import { Inject, Injectable, Logger } from '@nestjs/common';
import type { WebClient } from '@slack/web-api';
import type { ApprovalCallback, ApprovalOutcome, ApprovalRequest } from '../../application/ports/approval-callback.port';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import { outcomeMessage, requestMessage } from './slack-blocks';
import { isCurable, SLACK_CLIENT, slackPlatformError } from './slack-client';
import { SlackMessageStore } from './slack-messages.store';

/**
 * Slack as an approval channel: a Block Kit message per request in SLACK_CHANNEL, updated with the outcome
 * whichever channel (or the clock, or a halt) ended it. Clicks come back through SlackInteractions. Only the
 * requests of TOLLGATE_SLACK_TENANT are shown: one Slack workspace serves one tenant.
 */
@Injectable()
export class SlackApprovalCallback implements ApprovalCallback {
  readonly channel = 'slack';
  private readonly log = new Logger('Slack');

  constructor(
    @Inject(SLACK_CLIENT) private readonly slack: WebClient,
    private readonly messages: SlackMessageStore,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
  ) {}

  private get tenant(): string {
    return this.config.slack!.tenant;
  }

  async ask(r: ApprovalRequest): Promise<void> {
    if (r.tenantId !== this.tenant) return;
    if (await this.messages.find(r.tenantId, r.id)) return; // redelivered: posted already
    const message = requestMessage(r);
    let posted: { channel?: string; ts?: string };
    try {
      posted = await this.slack.chat.postMessage({ channel: this.config.slack!.channel, text: message.text, blocks: message.blocks, unfurl_links: false, unfurl_media: false });
    } catch (e) {
      if (isCurable(e)) throw e;
      this.log.error(`chat.postMessage for ${r.id} refused (${slackPlatformError(e)}); not retried`);
      return;
    }
    if (!posted.channel || !posted.ts) throw new Error('chat.postMessage answered without channel and ts');
    await this.messages.save(r.tenantId, r.id, { channelId: posted.channel, ts: posted.ts, conversation: r.conversation });
  }

  async tell(o: ApprovalOutcome): Promise<void> {
    if (o.tenantId !== this.tenant) return;
    const ref = await this.messages.find(o.tenantId, o.toolCall.id);
    if (!ref || ref.outcome === o.outcome) return; // never posted (see ask), or updated already
    const message = outcomeMessage(o, ref.conversation ?? undefined);
    try {
      await this.slack.chat.update({ channel: ref.channelId, ts: ref.ts, text: message.text, blocks: message.blocks });
    } catch (e) {
      if (isCurable(e)) throw e;
      this.log.warn(`chat.update for ${o.toolCall.id} refused (${slackPlatformError(e)}); not retried`);
    }
    await this.messages.markOutcome(o.tenantId, o.toolCall.id, o.outcome);
  }
}
