import { Inject, Injectable, Logger } from '@nestjs/common';
import type { WebClient } from '@slack/web-api';
import { Deciders } from '../../application/persons/deciders';
import type { ApprovalRequest } from '../../application/ports/approval-callback.port';
import { PERSONS, PersonRepository } from '../../application/ports/person.port';
import type { Person } from '../../domain/person/person';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import { slackLinkIn, slackRoutes } from '../../infrastructure/config/slack-config';
import { ActionLinks } from '../actions/action-links';
import type { DigestSender } from '../reach/digests';
import { ReachPlanner } from '../reach/reach-planner';
import { SentNotifications } from '../reach/sent-notifications';
import { escapeMrkdwn } from './slack-blocks';
import { isCurable, SLACK_CLIENT, slackPlatformError } from './slack-client';

/** One line of agent text in a Slack message: escaped, no line breaks, bounded. */
function oneLine(s: string, max: number): string {
  const flat = escapeMrkdwn(s.replace(/\s+/g, ' ').trim());
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function titleOf(r: ApprovalRequest): string {
  const d = r.display as { title?: unknown } | undefined;
  return typeof d?.title === 'string' && d.title.trim() ? `${d.title} (${r.toolName})` : r.toolName;
}

/**
 * Direct messages from the Slack app to the people a request reaches who asked for them (their `slack` setting:
 * a message per call, or digests): a line about each call and a link to its card — no buttons: decisions are made
 * on the card or in the channel's message, where Slack's click says which tenant's request it is. People are found
 * through their Slack links in the request's tenant (the settings, or a link stored when they decided in Slack).
 */
@Injectable()
export class SlackDirectMessages implements DigestSender {
  readonly channel = 'slack';
  private readonly log = new Logger('Slack');

  constructor(
    @Inject(SLACK_CLIENT) private readonly slack: WebClient,
    @Inject(PERSONS) private readonly persons: PersonRepository,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
    private readonly deciders: Deciders,
    private readonly planner: ReachPlanner,
    private readonly links: ActionLinks,
    private readonly sent: SentNotifications,
  ) {}

  /** A new request: a direct message to each person who wants one now; digests made due for the others. */
  async ask(r: ApprovalRequest): Promise<void> {
    if (!Object.hasOwn(slackRoutes(this.config.slack!), r.tenantId)) return;
    const people = await this.planner.now(
      r.tenantId,
      'slack',
      await this.deciders.of(r, this.config.personMaxAgeSeconds),
    );
    const fresh = await this.sent.claim(
      r.tenantId,
      r.id,
      this.channel,
      people.map((p) => p.id),
      'ask',
    );
    for (const p of people.filter((x) => fresh.has(x.id))) {
      const text =
        `:raised_hand: A call waits for you: *${oneLine(titleOf(r), 150)}* by agent \`${oneLine(r.conversation.agentId, 80)}\`` +
        ` · <${this.links.cardUrl(r.id)}|open the card>`;
      await this.send(r.tenantId, p, text);
    }
  }

  async sendDigest(p: Person, waiting: ApprovalRequest[], more: boolean): Promise<void> {
    if (!Object.hasOwn(slackRoutes(this.config.slack!), p.tenantId)) return;
    const lines = waiting.map(
      (r) =>
        `• <${this.links.cardUrl(r.id)}|${oneLine(titleOf(r), 120)}> by \`${oneLine(r.conversation.agentId, 60)}\``,
    );
    const head = `:inbox_tray: ${waiting.length}${more ? '+' : ''} ${waiting.length === 1 && !more ? 'call waits' : 'calls wait'} for you in Tollgate`;
    await this.send(
      p.tenantId,
      p,
      [head, ...lines, ...(more ? [`<${this.links.inboxUrl()}|More in the inbox>`] : [])].join('\n'),
    );
  }

  /** To each of the person's Slack users in the tenant; a refusal no retry cures is logged and passed over. */
  private async send(tenant: string, p: Person, text: string): Promise<void> {
    for (const user of await this.usersOf(tenant, [p.id])) {
      try {
        await this.slack.chat.postMessage({
          channel: user,
          text: text.slice(0, 3000),
          unfurl_links: false,
          unfurl_media: false,
        });
      } catch (e) {
        if (isCurable(e)) throw e;
        this.log.warn(`direct message to ${user} refused (${slackPlatformError(e)}); not retried`);
      }
    }
  }

  /**
   * The Slack users linked to these persons in the tenant: by the settings (TOLLGATE_SLACK_APPROVERS) or, once they
   * decided in Slack, by their verified email. Only ids Slack issues (`U…`, `W…`), a few per person.
   */
  async usersOf(tenant: string, personIds: readonly string[]): Promise<string[]> {
    if (personIds.length === 0) return [];
    const slack = this.config.slack!;
    const configured = [
      ...new Set([...Object.keys(slack.people), ...Object.keys(slack.tenantPeople?.[tenant] ?? {})]),
    ].filter((u) => personIds.includes(slackLinkIn(slack, tenant, u) ?? ''));
    const stored = await this.persons.channelUsersOf(tenant, 'slack', personIds);
    return [...new Set([...configured, ...stored])]
      .filter((u) => /^[UW][A-Z0-9]{1,31}$/.test(u))
      .slice(0, 5 * personIds.length);
  }
}
