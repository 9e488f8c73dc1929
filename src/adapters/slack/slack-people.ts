import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { WebClient } from '@slack/web-api';
import { ChannelPeople } from '../../application/persons/channel-people';
import type { Unlinked } from '../../domain/person/rules/channel-link';
import { spanText } from '../../domain/person/rules/channel-link';
import type { Principal } from '../../domain/shared/actor';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import { DEFAULT_PERSON_MAX_AGE_SECONDS, slackLinkIn } from '../../infrastructure/config/slack-config';
import { SLACK_CLIENT, slackPlatformError } from './slack-client';

/** The Slack user as the Tollgate person they are (via `slack`, their Slack id kept), or what to tell them. */
export type SlackPerson =
  | { kind: 'person'; principal: Principal & { via: 'slack'; channelUser: string } }
  | {
      kind: 'refused';
      code: 'unlinked_channel_user' | 'stale_person';
      reason: string;
      tell: string;
      /** The person the link names, when it names one. */
      personId?: string;
    };

/**
 * Who a Slack user is in Tollgate: the person TOLLGATE_SLACK_APPROVERS links them to (`U777=ann`), else the one
 * person of the tenant with a role and their verified Slack email (`users.info`, scope
 * `users:read.email`, asked on every click so an email link holds only while the email does). The person decides
 * and answers with the roles of their record, so they are one person in every channel, and only while their last
 * sign-in is younger than TOLLGATE_PERSON_MAX_AGE.
 */
@Injectable()
export class SlackPeople implements OnModuleInit {
  private readonly log = new Logger('Slack');

  constructor(
    private readonly people: ChannelPeople,
    @Inject(SLACK_CLIENT) private readonly slack: WebClient,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
  ) {}

  onModuleInit(): void {
    const warning = tenantMismatch(this.config);
    if (warning) this.log.warn(warning);
  }

  /** Who the Slack user is in `tenant`: the tenant of the message they acted on (one Slack app, several tenants). */
  async whoIs(user: { id?: string } | undefined, tenant: string): Promise<SlackPerson | null> {
    const id = user?.id;
    if (!id || !/^[A-Z0-9]{1,32}$/.test(id)) return null;
    const slack = this.config.slack!;
    const found = await this.people.resolve({
      tenant,
      channel: 'slack',
      channelUser: id,
      configured: slackLinkIn(slack, tenant, id),
      verifiedEmail: () => this.verifiedEmail(id),
      maxAgeSeconds: slack.personMaxAgeSeconds ?? DEFAULT_PERSON_MAX_AGE_SECONDS,
    });
    if (found.kind === 'person') return found;
    return {
      kind: 'refused',
      code: found.kind === 'stale' ? 'stale_person' : 'unlinked_channel_user',
      reason: found.reason,
      tell: howToLink(id, tenant, found),
      ...('personId' in found ? { personId: found.personId } : {}),
    };
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

/**
 * The start-up warning when single sign-on puts everyone in one tenant and Slack acts in another: every Slack user
 * would be refused as linked to no one (or to a person who never signed in), though they sign in every day.
 */
export function tenantMismatch(config: Pick<TollgateConfig, 'oidc' | 'slack'>): string | undefined {
  const sso = config.oidc?.tenant;
  const slack = config.slack?.tenant;
  if (!sso || !('fixed' in sso) || slack === undefined || sso.fixed === slack) return undefined;
  if (config.slack?.routes && Object.hasOwn(config.slack.routes, sso.fixed)) return undefined;
  return (
    `Single sign-on puts people in tenant "${sso.fixed}" (TOLLGATE_OIDC_TENANT) but Slack acts in tenant "${slack}" ` +
    `(TOLLGATE_SLACK_TENANT${slack === 'default' ? ', unset' : ''}): Slack users will be refused as linked to no one ` +
    `who signed in there. Set TOLLGATE_SLACK_TENANT=${sso.fixed} if Slack approves for that tenant.`
  );
}

/** What the Slack user is told; short enough that a modal's 150 characters carry what to do. */
function howToLink(id: string, tenant: string, why: Unlinked): string {
  const where = `in tenant \`${tenant}\``;
  const ask = `or ask a Tollgate admin to add \`${id}=<your Tollgate person id>\` to TOLLGATE_SLACK_APPROVERS`;
  switch (why.kind) {
    case 'stale':
      return (
        `Tollgate refused: your Tollgate sign-in is older than ${spanText(why.maxAgeSeconds)}. Sign in again (web ` +
        `inbox, \`tollgate login\`, or any request with your token), then retry.`
      );
    case 'unseen':
      return (
        `Tollgate refused: your Slack user is linked to "${why.personId}", who has not signed in to Tollgate ${where} ` +
        `yet. Sign in to Tollgate once (the web inbox or the CLI), then try again; if you sign in to another tenant, ` +
        `Slack is not set up for it (ask a Tollgate admin).`
      );
    case 'ambiguous':
      return `Tollgate refused: ${why.reason}, so it cannot tell which one you are. Ask a Tollgate admin to add \`${id}=<your Tollgate person id>\` to TOLLGATE_SLACK_APPROVERS.`;
    case 'unlinked':
      return `Tollgate refused: your Slack user is not linked to a Tollgate person ${where}: ${why.reason}. Sign in to Tollgate once with the same email as your Slack account, ${ask}.`;
  }
}
