import { Inject, Injectable, Logger } from '@nestjs/common';
import type { WebClient } from '@slack/web-api';
import { ChannelPeople } from '../../application/persons/channel-people';
import type { Principal } from '../../domain/shared/actor';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import { SLACK_CLIENT, slackPlatformError } from './slack-client';

/** The Slack user as the Tollgate person they are (via `slack`, their Slack id kept), or what to tell them. */
export type SlackPerson =
  | { kind: 'person'; principal: Principal & { via: 'slack'; channelUser: string } }
  | { kind: 'refused'; reason: string; tell: string };

/**
 * Who a Slack user is in Tollgate: the person TOLLGATE_SLACK_APPROVERS links them to (`U777=ann`), else the one
 * person of TOLLGATE_SLACK_TENANT with their verified Slack email (`users.info`, scope `users:read.email`). The
 * person decides and answers with the roles of their record, so they are one person in every channel.
 */
@Injectable()
export class SlackPeople {
  private readonly log = new Logger('Slack');

  constructor(
    private readonly people: ChannelPeople,
    @Inject(SLACK_CLIENT) private readonly slack: WebClient,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
  ) {}

  async whoIs(user: { id?: string } | undefined): Promise<SlackPerson | null> {
    const id = user?.id;
    if (!id || !/^[A-Z0-9]{1,32}$/.test(id)) return null;
    const slack = this.config.slack!;
    const found = await this.people.resolve({
      tenant: slack.tenant,
      channel: 'slack',
      channelUser: id,
      configured: Object.hasOwn(slack.people, id) ? slack.people[id] : undefined,
      verifiedEmail: () => this.verifiedEmail(id),
    });
    if (found.kind === 'person') return found;
    return { kind: 'refused', reason: found.reason, tell: howToLink(id, found.kind, found.reason) };
  }

  /** The user's email when Slack says it is confirmed; none for bots, deleted users, or when Slack will not say. */
  private async verifiedEmail(id: string): Promise<string | undefined> {
    try {
      const r = await this.slack.users.info({ user: id });
      const u = r.user;
      if (!u || u.deleted || u.is_bot || u.is_email_confirmed !== true) return undefined;
      const email = u.profile?.email?.trim();
      return email && email.length <= 320 ? email : undefined;
    } catch (e) {
      // Without users:read.email (or with Slack down) nobody is linked by email; the settings' links still work.
      this.log.warn(`users.info for ${id} failed (${slackPlatformError(e) ?? (e as Error).message})`);
      return undefined;
    }
  }
}

function howToLink(id: string, kind: 'unlinked' | 'ambiguous' | 'unseen', reason: string): string {
  const ask = `or ask a Tollgate admin to add \`${id}=<your Tollgate person id>\` to TOLLGATE_SLACK_APPROVERS`;
  if (kind === 'unseen')
    return `Tollgate refused: your Slack user is linked to a person who has not signed in to Tollgate yet. Sign in to Tollgate once (the web inbox or the CLI), then try again.`;
  if (kind === 'ambiguous')
    return `Tollgate refused: ${reason}, so it cannot tell which one you are. Ask a Tollgate admin to add \`${id}=<your Tollgate person id>\` to TOLLGATE_SLACK_APPROVERS.`;
  return `Tollgate refused: your Slack user is not linked to a Tollgate person (${reason}). Sign in to Tollgate once with the same email as your Slack account, ${ask}.`;
}
