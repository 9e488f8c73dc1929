import { Inject, Injectable, Logger } from '@nestjs/common';
import { Deciders } from '../../application/persons/deciders';
import type {
  ApprovalCallback,
  ApprovalOutcome,
  ApprovalRequest,
} from '../../application/ports/approval-callback.port';
import type { Person } from '../../domain/person/person';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import { ActionLinks } from '../actions/action-links';
import { DigestSender } from '../reach/digests';
import { ReachPlanner } from '../reach/reach-planner';
import { SentKind, SentNotifications } from '../reach/sent-notifications';
import { DIGEST_ARGUMENTS_MAX, digestEmail, emailArguments, noticeEmail, requestEmail } from './email-message';
import { MAILER, Mailer } from './mailer';

/** An address a message may go to: one mailbox, no display name or header tricks. */
const ADDRESS = /^[^\s@<>(),;:"\\]{1,64}@[^\s@<>(),;:"\\]{1,255}$/;

/**
 * Email as an approval channel (TOLLGATE_SMTP_URL): one message per held call to each person who may decide it
 * and has an email on record (Deciders), with single-use Approve and Reject links and the card. An escalation
 * (when its step names `email`) mails the people it adds; a reminder mails everyone again once. Each message is
 * recorded in `notifications_sent` before it is sent, so an outbox redelivery sends nothing twice; a send that
 * fails is un-recorded and retried. Outcomes send nothing: a link used later shows where the call stands.
 */
@Injectable()
export class EmailApprovalCallback implements ApprovalCallback, DigestSender {
  readonly channel = 'email';
  private readonly log = new Logger('Email');

  constructor(
    @Inject(MAILER) private readonly mailer: Mailer,
    private readonly deciders: Deciders,
    private readonly links: ActionLinks,
    private readonly sent: SentNotifications,
    private readonly planner: ReachPlanner,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
  ) {}

  async ask(r: ApprovalRequest): Promise<void> {
    await this.mailAll(r, 'ask');
  }

  async remind(r: ApprovalRequest, note: { kind: 'escalated' | 'reminder'; text: string }): Promise<void> {
    // An escalation reaches the people it adds (those mailed before are on record under `ask`).
    await this.mailAll(r, note.kind === 'escalated' ? 'ask' : 'reminder', note.text);
  }

  /**
   * A `notify` call ran at once and its rule names email (`notify: [email]`): an FYI to the people it tells
   * (`approvers`), once each, with its card; no links to decide (nothing is left to decide).
   */
  async notify(r: ApprovalRequest, told: { approvers: string[] }): Promise<void> {
    const reached = (await this.deciders.of(r, this.config.personMaxAgeSeconds, told.approvers)).filter(
      (p) => p.email && ADDRESS.test(p.email),
    );
    const people = await this.planner.onlyNow(r.tenantId, 'email', reached);
    for (const p of people) {
      if (!(await this.claimed(r, p, 'ask'))) continue;
      try {
        const messageId = `<${r.id}.notice.${Buffer.from(p.id).toString('base64url')}@${this.domain}>`;
        await this.mailer.send(noticeEmail(r, { email: p.email!, name: p.name }, this.links.cardUrl(r.id), messageId));
      } catch (e) {
        if (refusedForGood(e)) {
          this.log.warn(`FYI email about ${r.id} to person ${p.id} refused (${(e as Error).message}); not retried`);
          continue;
        }
        await this.sent.release(r.tenantId, r.id, this.channel, p.id, 'ask').catch(() => undefined);
        throw e;
      }
    }
  }

  async tell(_o: ApprovalOutcome): Promise<void> {
    // Nothing to update in a sent email: its links, used later, say the call is decided.
  }

  private async mailAll(r: ApprovalRequest, kind: 'ask' | 'reminder', note?: string): Promise<void> {
    if (r.status !== 'pending') return;
    const people = (await this.deciders.of(r, this.config.personMaxAgeSeconds)).filter(
      (p) => p.email && ADDRESS.test(p.email),
    );
    // People who want digests, or are in their quiet hours, get the call in a digest instead.
    for (const p of await this.planner.now(r.tenantId, 'email', people)) await this.mail(r, p, kind, note);
  }

  /** A digest of what waits for the person (DigestRunner): one email, each call with its own single-use links. */
  async sendDigest(p: Person, waiting: ApprovalRequest[], more: boolean): Promise<void> {
    if (!p.email || !ADDRESS.test(p.email)) return;
    const offers = await Promise.all(
      waiting.map((r) =>
        this.links.offer(r, p.id, 'email', {
          shownWhole: JSON.stringify(r.arguments).length <= DIGEST_ARGUMENTS_MAX,
        }),
      ),
    );
    const messageId = `<digest.${Date.now()}.${Buffer.from(p.id).toString('base64url')}@${this.domain}>`;
    await this.mailer.send(
      digestEmail(waiting, offers, { email: p.email, name: p.name }, more, messageId, this.links.inboxUrl()),
    );
  }

  private async claimed(r: ApprovalRequest, p: Person, kind: SentKind): Promise<boolean> {
    return (await this.sent.claim(r.tenantId, r.id, this.channel, [p.id], kind)).has(p.id);
  }

  private get domain(): string {
    return /@(.+)$/.exec(this.config.email!.from.replace(/>$/, ''))?.[1] ?? 'tollgate.invalid';
  }

  private async mail(r: ApprovalRequest, p: Person, kind: 'ask' | 'reminder', note?: string): Promise<void> {
    if (!(await this.claimed(r, p, kind))) return; // sent before this delivery
    try {
      const offer = await this.links.offer(r, p.id, 'email', { shownWhole: emailArguments(r).whole });
      const domain = this.domain;
      const messageId = `<${r.id}.${kind}.${Buffer.from(p.id).toString('base64url')}@${domain}>`;
      const email = requestEmail(r, { email: p.email!, name: p.name }, offer, messageId, note);
      if (kind !== 'ask') email.references = `<${r.id}.ask.${Buffer.from(p.id).toString('base64url')}@${domain}>`;
      await this.mailer.send(email);
    } catch (e) {
      // A refusal for good (this address, this message) is logged and passed over: retrying would hold up every later
      // email of the tenant behind it. The server's answer may say why (never the SMTP URL: it holds a password).
      if (refusedForGood(e)) {
        this.log.warn(`email about ${r.id} to person ${p.id} refused (${(e as Error).message}); not retried`);
        return;
      }
      await this.sent.release(r.tenantId, r.id, this.channel, p.id, kind).catch(() => undefined);
      this.log.warn(`email about ${r.id} to person ${p.id} failed (${(e as Error).message}); retried`);
      throw e;
    }
  }
}

/** An SMTP refusal no retry cures: a 5xx answer, or an envelope the server will never take (a bad address). */
export function refusedForGood(e: unknown): boolean {
  const x = e as { responseCode?: unknown; code?: unknown };
  return (typeof x.responseCode === 'number' && x.responseCode >= 500) || x.code === 'EENVELOPE';
}
