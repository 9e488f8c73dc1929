import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { WebClient } from '@slack/web-api';
import { DecideToolCallCommand } from '../../application/commands/decide-tool-call/decide-tool-call.command';
import type { Decider } from '../../domain/conversation/conversation.aggregate';
import { DomainError } from '../../domain/shared/domain-error';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import { widestGrantFor } from '../../domain/grant/rules/grant-authority';
import type { GrantScope } from '../../domain/policy/grant-limit';
import {
  ALWAYS_ALLOW_ACTION,
  ALWAYS_ALLOW_MODAL,
  alwaysAllowModal,
  APPROVE_ACTION,
  EXPIRY_BLOCK,
  EXPIRY_INPUT,
  GRANT_LIFETIMES,
  GRANT_SCOPES,
  REASON_BLOCK,
  REASON_INPUT,
  REJECT_ACTION,
  REJECT_MODAL,
  rejectModal,
  escapeMrkdwn,
  type MessageLinks,
  passkeyLine,
  SCOPE_BLOCK,
  SCOPE_INPUT,
} from './slack-blocks';
import { SLACK_CLIENT } from './slack-client';
import { SlackMessageStore } from './slack-messages.store';
import { SlackPeople } from './slack-people';
import { SlackQuestions } from './slack-questions';
import { RefuseUnlinkedDecisionCommand } from '../../application/persons/refuse-unlinked-decision';

/** What Slack posts to the interactivity URL (the parts Tollgate reads). */
export interface SlackInteraction {
  type: string;
  user?: { id?: string; name?: string; username?: string };
  channel?: { id?: string };
  container?: { channel_id?: string; message_ts?: string };
  message?: { ts?: string };
  trigger_id?: string;
  actions?: Array<{ action_id?: string; value?: string }>;
  view?: {
    callback_id?: string;
    private_metadata?: string;
    state?: {
      values?: Record<string, Record<string, { value?: string | null; selected_option?: { value?: string } | null }>>;
    };
  };
}

/** The body of the HTTP answer to Slack: nothing (acknowledged), or errors to show in the modal. */
export type SlackAck = undefined | { response_action: 'errors'; errors: Record<string, string> };

/** What a click on a message Tollgate did not post about that call is told. */
const NOT_OURS = 'Tollgate refused: this message is not the one Tollgate posted about this request.';

/** A view submission may wait this long for the decision, to show a refusal in the modal; Slack allows 3 s. */
const SUBMISSION_WAIT_MS = 2000;

/**
 * Turns Slack clicks into the same DecideToolCallCommand every channel uses: via `slack`, as the Tollgate person
 * the Slack user is linked to (SlackPeople), with that person's roles, in the tenant whose request the message is. So separation of
 * duties and quorums see one person whichever channel they decide in. Slack is answered at once; the decision is
 * applied right after, and the outbox then updates the message. A Slack user linked to no person (or to one whose
 * sign-in is older than TOLLGATE_PERSON_MAX_AGE) is refused, recorded as DecisionRefused (`unlinked_channel_user`,
 * `stale_person`), and told what to do; any refusal gets an ephemeral message.
 */
@Injectable()
export class SlackInteractions implements BeforeApplicationShutdown {
  private readonly log = new Logger('Slack');
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly commands: CommandBus,
    @Inject(SLACK_CLIENT) private readonly slack: WebClient,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
    private readonly questions: SlackQuestions,
    private readonly people: SlackPeople,
    private readonly messages: SlackMessageStore,
  ) {}

  async handle(p: SlackInteraction): Promise<SlackAck> {
    if (this.questions.handles(p)) {
      // A choice answers after Slack is acknowledged; the answer modal waits for the answer to show a refusal.
      if (p.type === 'view_submission') return this.questions.interact(p);
      this.later(async () => void (await this.questions.interact(p)));
      return undefined;
    }
    if (p.type === 'block_actions') {
      const action = p.actions?.find(
        (a) => a.action_id === APPROVE_ACTION || a.action_id === REJECT_ACTION || a.action_id === ALWAYS_ALLOW_ACTION,
      );
      if (action?.value) this.later(() => this.onClick(p, action.action_id!, action.value!));
      return undefined;
    }
    if (p.type === 'view_submission' && p.view?.callback_id === REJECT_MODAL) return this.onRejectSubmitted(p);
    if (p.type === 'view_submission' && p.view?.callback_id === ALWAYS_ALLOW_MODAL)
      return this.onAlwaysAllowSubmitted(p);
    return undefined; // other interactions are not ours to answer
  }

  private async onClick(p: SlackInteraction, actionId: string, toolCallId: string): Promise<void> {
    const where = { channel: p.channel?.id ?? p.container?.channel_id, ts: p.message?.ts ?? p.container?.message_ts };
    const decision = actionId === APPROVE_ACTION ? 'approve' : actionId === REJECT_ACTION ? 'reject' : 'always_allow';
    const tenant = await this.tenantOf(where, toolCallId);
    if (!tenant) return this.refuse(p, where.channel, NOT_OURS);
    const decider = await this.decider(p, toolCallId, decision, tenant);
    if (typeof decider === 'string') return this.refuse(p, where.channel, decider);
    if (actionId === APPROVE_ACTION) {
      await this.decide(decider, toolCallId, { decision: 'approve' }).catch((e) =>
        this.refuse(p, where.channel, refusal(e, this.links).text),
      );
      return;
    }
    if (!p.trigger_id) return;
    const view =
      actionId === ALWAYS_ALLOW_ACTION
        ? alwaysAllowModal({ toolCallId, ...where }, grantableBy(decider))
        : rejectModal({ toolCallId, ...where });
    await this.slack.views.open({ trigger_id: p.trigger_id, view: view as never });
  }

  private async onRejectSubmitted(p: SlackInteraction): Promise<SlackAck> {
    const meta = parseMeta(p.view?.private_metadata);
    const reason = p.view?.state?.values?.[REASON_BLOCK]?.[REASON_INPUT]?.value?.trim();
    if (!meta) return undefined;
    if (!reason) return { response_action: 'errors', errors: { [REASON_BLOCK]: 'Say why you reject it.' } };
    const tenant = await this.tenantOf(meta, meta.toolCallId);
    if (!tenant) return { response_action: 'errors', errors: { [REASON_BLOCK]: NOT_OURS } };
    const decider = await this.decider(p, meta.toolCallId, 'reject', tenant);
    if (typeof decider === 'string')
      return { response_action: 'errors', errors: { [REASON_BLOCK]: decider.slice(0, 150) } };
    return this.submit(p, meta, REASON_BLOCK, this.decide(decider, meta.toolCallId, { decision: 'reject', reason }));
  }

  /** "Always allow…" submitted: approve with a standing grant of the chosen scope and lifetime; a refusal (403) shows in the modal. */
  private async onAlwaysAllowSubmitted(p: SlackInteraction): Promise<SlackAck> {
    const meta = parseMeta(p.view?.private_metadata);
    if (!meta) return undefined;
    const values = p.view?.state?.values;
    const scope = values?.[SCOPE_BLOCK]?.[SCOPE_INPUT]?.selected_option?.value;
    if (!GRANT_SCOPES.some(([s]) => s === scope))
      return { response_action: 'errors', errors: { [SCOPE_BLOCK]: 'Choose where the grant applies.' } };
    const expiry = values?.[EXPIRY_BLOCK]?.[EXPIRY_INPUT]?.selected_option?.value ?? 'never';
    const lifetime = GRANT_LIFETIMES.find(([v]) => v === expiry);
    if (!lifetime) return { response_action: 'errors', errors: { [EXPIRY_BLOCK]: 'Choose how long the grant lasts.' } };
    const reason = values?.[REASON_BLOCK]?.[REASON_INPUT]?.value?.trim() || undefined;
    const tenant = await this.tenantOf(meta, meta.toolCallId);
    if (!tenant) return { response_action: 'errors', errors: { [SCOPE_BLOCK]: NOT_OURS } };
    const decider = await this.decider(p, meta.toolCallId, 'always_allow', tenant);
    if (typeof decider === 'string')
      return { response_action: 'errors', errors: { [SCOPE_BLOCK]: decider.slice(0, 150) } };
    const input = { decision: 'always_allow' as const, scope: scope as GrantScope, ...(reason ? { reason } : {}) };
    const decided = this.commands.execute(
      new DecideToolCallCommand(
        decider,
        meta.toolCallId,
        input,
        lifetime[2] !== undefined ? { expiresIn: lifetime[2] } : {},
      ),
    );
    return this.submit(p, meta, SCOPE_BLOCK, decided);
  }

  /**
   * Answers a modal's submission once its decision is applied, showing a refusal on `block` — unless it takes
   * longer than Slack waits: then the modal closes and a refusal is said in the channel.
   */
  private async submit(
    p: SlackInteraction,
    meta: { channel?: string },
    block: string,
    decision: Promise<unknown>,
  ): Promise<SlackAck> {
    const decided = decision.then(
      () => undefined,
      (e: unknown) => refusal(e, this.links),
    );
    const waited = await Promise.race([
      decided,
      new Promise<'later'>((r) => setTimeout(() => r('later'), SUBMISSION_WAIT_MS).unref()),
    ]);
    if (waited === 'later') {
      // Still running: close the modal now and say so in the channel should it be refused.
      this.later(async () => {
        const problem = await decided;
        if (problem) await this.refuse(p, meta.channel, problem.text);
      });
      return undefined;
    }
    if (!waited) return undefined;
    // A modal's error is plain text and short: the link to the card goes to the channel beside it.
    if (waited.link) await this.refuse(p, meta.channel, waited.text);
    return { response_action: 'errors', errors: { [block]: waited.modal.slice(0, 150) } };
  }

  /** Where refusals link to a call's card (TOLLGATE_PUBLIC_URL). */
  private get links(): MessageLinks {
    return { publicUrl: this.config.publicUrl };
  }

  private decide(
    decider: Decider,
    toolCallId: string,
    input: { decision: 'approve' | 'reject'; reason?: string },
  ): Promise<unknown> {
    return this.commands.execute(new DecideToolCallCommand(decider, toolCallId, input));
  }

  /**
   * The Slack user as the person linked to them, or what to tell them. A user linked to no person, or to one whose
   * sign-in is too old, is refused and the refusal recorded (DecisionRefused, `unlinked_channel_user` or
   * `stale_person`) against the call they clicked.
   */
  /**
   * The tenant of the Slack message a click was made on: the one its request was posted for, when the message is
   * the one Tollgate posted about this very call. One Slack app may serve several tenants (TOLLGATE_SLACK_TENANTS);
   * a click never acts in another tenant than its message's, whatever the button's value says.
   */
  private async tenantOf(where: { channel?: string; ts?: string }, toolCallId: string): Promise<string | undefined> {
    if (!where.channel || !where.ts) return undefined;
    // Slack shows the message before Tollgate has stored where it is: a click that quick looks again, briefly.
    for (let attempt = 0; ; attempt++) {
      const found = await this.messages.findByMessage(where.channel, where.ts);
      if (found) return found.id === toolCallId ? found.tenantId : undefined;
      if (attempt === 4) return undefined;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  private async decider(
    p: SlackInteraction,
    toolCallId: string,
    decision: 'approve' | 'reject' | 'always_allow',
    tenant: string,
  ): Promise<Decider | string> {
    const who = await this.people.whoIs(p.user, tenant);
    if (!who) return 'Tollgate refused: Slack did not say who you are.';
    if (who.kind === 'person') return who.principal;
    const name = p.user?.name ?? p.user?.username;
    await this.commands.execute(
      new RefuseUnlinkedDecisionCommand(
        tenant,
        toolCallId,
        decision,
        'slack',
        p.user!.id!,
        { code: who.code, reason: who.reason, ...(who.personId !== undefined ? { personId: who.personId } : {}) },
        name,
      ),
    );
    return who.tell;
  }

  private async refuse(p: SlackInteraction, channel: string | undefined, text: string): Promise<void> {
    if (!channel || !p.user?.id) return;
    await this.slack.chat.postEphemeral({ channel, user: p.user.id, text });
  }

  /** Work after the answer to Slack; awaited at shutdown so nothing is cut off halfway. */
  private later(work: () => Promise<void>): void {
    const run = work()
      .catch((e: unknown) => this.log.warn(`Slack interaction failed: ${(e as Error).message}`))
      .finally(() => this.inFlight.delete(run));
    this.inFlight.add(run);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }
}

/** The scopes a person may grant, narrowest first (the policy may narrow them further: the server says so). */
function grantableBy(decider: Decider): GrantScope[] {
  const widest = widestGrantFor(decider);
  const upTo = GRANT_SCOPES.findIndex(([s]) => s === widest);
  return GRANT_SCOPES.slice(0, upTo + 1).map(([s]) => s);
}

/**
 * What to tell the person of a refusal: `text` for a message; a refusal that points to the call's card (a passkey
 * it needs, or a chat approval it does not take) links to it, and `modal` says it briefly in plain text.
 */
function refusal(e: unknown, links: MessageLinks): { text: string; link?: true; modal: string } {
  if (!(e instanceof DomainError)) throw e;
  const text = `Tollgate refused: ${escapeMrkdwn(e.message)}`;
  const id = e.details.toolCallId;
  // A modal's error is plain text: the message as it is.
  if (e.details.stepUp !== 'passkey' || typeof id !== 'string')
    return { text, modal: `Tollgate refused: ${e.message}` };
  return {
    text: `${text}\n${passkeyLine(id, links)}`,
    link: true,
    modal: 'Needs a passkey: approve it in the Tollgate inbox (the link is in the channel)',
  };
}

function parseMeta(raw: string | undefined): { toolCallId: string; channel?: string; ts?: string } | null {
  try {
    const m = JSON.parse(raw ?? '') as { toolCallId?: unknown; channel?: unknown; ts?: unknown };
    if (typeof m.toolCallId !== 'string') return null;
    return {
      toolCallId: m.toolCallId,
      channel: typeof m.channel === 'string' ? m.channel : undefined,
      ts: typeof m.ts === 'string' ? m.ts : undefined,
    };
  } catch {
    return null;
  }
}
