import { Inject, Injectable } from '@nestjs/common';
import { Deciders } from '../../application/persons/deciders';
import { CLOCK, Clock } from '../../application/ports';
import type {
  ApprovalCallback,
  ApprovalOutcome,
  ApprovalRequest,
} from '../../application/ports/approval-callback.port';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import type { Person } from '../../domain/person/person';
import { ActionLinks } from '../actions/action-links';
import type { DigestSender } from '../reach/digests';
import { ReachPlanner } from '../reach/reach-planner';
import { argumentsLine, askMessage, digestMessage, noticeMessage, outcomeMessage } from './push-payload';
import { PushSender, PushSendOptions, topicFor } from './push-sender';
import { PushSubscriptionRecord, PushSubscriptionStore } from './push-subscription.store';
import { SentKind, SentNotifications } from '../reach/sent-notifications';

/** Requests sent at once: a push service answers in tens of milliseconds; two hundred people need not wait in line. */
const CONCURRENCY = 8;
/** How long a push service may hold an outcome for a phone that is off: after a day it is old news. */
const OUTCOME_TTL_SECONDS = 24 * 3600;

/**
 * Web Push as an approval channel: each person who may decide a held call (Deciders: by role, by name, the requester
 * where listed; signed in recently) gets a notification on every browser they subscribed, with Approve and Reject
 * that act as them through single-use tokens (ActionLinks), or only Reject and "open" when Approve is withheld (a
 * passkey step-up, arguments too long to show). The outcome replaces the notification. Sends are claimed first
 * (SentNotifications), so a redelivered event sends nothing twice; a push service's refusal is counted on the
 * subscription and passed over, never retried through the outbox (it would hold up every later call of the tenant).
 * Each person's notification settings apply (ReachPlanner): push off, or a digest instead (hourly, daily, or at the
 * end of their quiet hours), which the DigestRunner sends through `sendDigest`.
 */
@Injectable()
export class PushApprovalCallback implements ApprovalCallback, DigestSender {
  readonly channel = 'push';

  constructor(
    private readonly deciders: Deciders,
    private readonly links: ActionLinks,
    private readonly subscriptions: PushSubscriptionStore,
    private readonly sentNotifications: SentNotifications,
    private readonly sender: PushSender,
    private readonly planner: ReachPlanner,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async ask(r: ApprovalRequest): Promise<void> {
    await this.reach(r, 'ask');
  }

  /**
   * An escalation reaches those it made deciders and who were never asked (the others have the notification); a
   * reminder alerts everyone once more, with fresh tokens, as the deadline nears (once per person and call).
   */
  async remind(r: ApprovalRequest, note: { kind: 'escalated' | 'reminder'; text: string }): Promise<void> {
    await this.reach(r, note.kind === 'escalated' ? 'ask' : 'reminder', note.text);
  }

  async tell(o: ApprovalOutcome): Promise<void> {
    const told = await this.sentNotifications.told(o.tenantId, o.toolCall.id, this.channel);
    const subscriptions = await this.subscriptions.ofPersons(o.tenantId, told);
    const payload = JSON.stringify(outcomeMessage(o));
    const opts: PushSendOptions = {
      ttlSeconds: OUTCOME_TTL_SECONDS,
      urgency: 'normal',
      topic: topicFor(o.toolCall.id),
    };
    await inBatches(subscriptions, (s) => this.sender.send(s, payload, opts));
  }

  private async reach(r: ApprovalRequest, kind: SentKind, note?: string): Promise<void> {
    if (r.status !== 'pending' || !r.approval) return;
    const ttlSeconds = Math.floor((Date.parse(r.approval.expiresAt) - this.clock.now().getTime()) / 1000);
    if (!(ttlSeconds > 0)) return; // the call expires before anyone could act
    const people = await this.deciders.of(r, this.config.personMaxAgeSeconds);
    const subscriptions = await this.subscriptions.ofPersons(
      r.tenantId,
      people.map((p) => p.id),
    );
    const devices = byPerson(subscriptions);
    // Only people with a device have a say here: a digest is planned for no one it could reach.
    const now = await this.planner.now(
      r.tenantId,
      'push',
      people.filter((p) => devices.has(p.id)),
    );
    const fresh = await this.sentNotifications.claim(
      r.tenantId,
      r.id,
      this.channel,
      now.map((p) => p.id),
      kind,
    );
    const { whole } = argumentsLine(r.arguments);
    const opts: PushSendOptions = { ttlSeconds, urgency: 'high', topic: topicFor(r.id) };
    // One pair of tokens per person, on all their devices: whichever device is used first spends it.
    const sends = await Promise.all(
      [...fresh].map(async (personId) => {
        const offer = await this.links.offer(r, personId, 'push', { shownWhole: whole });
        const payload = JSON.stringify(askMessage(r, offer, note));
        return devices.get(personId)!.map((s) => ({ s, payload }));
      }),
    );
    await inBatches(sends.flat(), ({ s, payload }) => this.sender.send(s, payload, opts));
  }

  /**
   * A `notify` call ran at once and its rule names push (`notify: [push]`): an FYI on the devices of the people it
   * tells (`approvers`), once; under their settings like any message, but never in a digest (it is news now or not).
   */
  async notify(r: ApprovalRequest, told: { approvers: string[] }): Promise<void> {
    const reached = await this.deciders.of(r, this.config.personMaxAgeSeconds, told.approvers);
    const people = await this.planner.onlyNow(r.tenantId, 'push', reached);
    const devices = byPerson(
      await this.subscriptions.ofPersons(
        r.tenantId,
        people.map((p) => p.id),
      ),
    );
    const fresh = await this.sentNotifications.claim(
      r.tenantId,
      r.id,
      this.channel,
      people.filter((p) => devices.has(p.id)).map((p) => p.id),
      'ask',
    );
    const payload = JSON.stringify(noticeMessage(r));
    const opts: PushSendOptions = { ttlSeconds: OUTCOME_TTL_SECONDS, urgency: 'normal', topic: topicFor(r.id) };
    await inBatches(
      [...fresh].flatMap((id) => devices.get(id)!),
      (s) => this.sender.send(s, payload, opts),
    );
  }

  /** A digest (DigestRunner): one notification on each device saying what waits; a click opens the inbox. */
  async sendDigest(person: Person, waiting: ApprovalRequest[], more: boolean): Promise<void> {
    const devices = await this.subscriptions.ofPersons(person.tenantId, [person.id]);
    if (devices.length === 0) return;
    const payload = JSON.stringify(digestMessage(waiting, more));
    const opts: PushSendOptions = { ttlSeconds: OUTCOME_TTL_SECONDS, urgency: 'normal', topic: DIGEST_TOPIC };
    await inBatches(devices, (s) => this.sender.send(s, payload, opts));
  }
}

/** Digests replace each other on a phone that was off: only the latest says what waits now. */
const DIGEST_TOPIC = 'tollgate-digest';

function byPerson(subscriptions: PushSubscriptionRecord[]): Map<string, PushSubscriptionRecord[]> {
  const devices = new Map<string, PushSubscriptionRecord[]>();
  for (const s of subscriptions) devices.set(s.personId, [...(devices.get(s.personId) ?? []), s]);
  return devices;
}

/** Runs `work` over `items`, CONCURRENCY at a time. */
async function inBatches<T>(items: readonly T[], work: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += CONCURRENCY) await Promise.all(items.slice(i, i + CONCURRENCY).map(work));
}
