import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { WebClient } from '@slack/web-api';
import { AnswerQuestionCommand } from '../../application/commands/questions/question.commands';
import type { AuditEvent } from '../../application/ports/audit-log.port';
import type { OutboxConsumer } from '../../application/ports/outbox.port';
import { DomainError } from '../../domain/shared/domain-error';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import { slackRoutes } from '../../infrastructure/config/slack-config';
import { escapeMrkdwn, type SlackBlock } from './slack-blocks';
import { isCurable, SLACK_CLIENT, slackPlatformError } from './slack-client';
import { SlackMessageStore } from './slack-messages.store';
import { SlackPeople } from './slack-people';
import type { Principal } from '../../domain/shared/actor';

export const ANSWER_ACTION = 'tollgate_answer';
export const ANSWER_TEXT_ACTION = 'tollgate_answer_text';
export const ANSWER_MODAL = 'tollgate_answer_modal';
const ANSWER_BLOCK = 'answer';
const ANSWER_INPUT = 'answer';

/** What an answer click or modal carries: the question, and where its message is. */
interface Meta {
  questionId: string;
  channel?: string;
  ts?: string;
}

/**
 * Questions agents ask (`QuestionAsked`), in the Slack channel of TOLLGATE_SLACK_TENANT: one message per question,
 * its choices as buttons (and "Answer…" with a text box when free text is taken); the message is updated with the
 * answer, the expiry or the cancellation, whichever channel ended it. Clicks answer as the Tollgate person the Slack
 * user is linked to (SlackPeople), with that person's roles, through the same AnswerQuestionCommand as every
 * channel: who may answer (askTo), the first answer wins. Driven from the outbox under its own cursor (`slack-questions`).
 */
@Injectable()
export class SlackQuestions implements OutboxConsumer {
  readonly name = 'slack-questions';
  private readonly log = new Logger('Slack');

  constructor(
    private readonly commands: CommandBus,
    @Inject(SLACK_CLIENT) private readonly slack: WebClient,
    private readonly messages: SlackMessageStore,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
    private readonly people: SlackPeople,
  ) {}

  wants(e: AuditEvent): boolean {
    return Object.hasOwn(slackRoutes(this.config.slack!), e.tenant) && e.type.startsWith('Question');
  }

  async deliver(e: AuditEvent): Promise<void> {
    const d = e.data as {
      questionId: string;
      text?: string;
      choices?: string[];
      allowFreeText?: boolean;
      expiresAt?: string;
      answer?: string;
      by?: string;
      via?: string;
      reason?: string;
    };
    try {
      if (e.type === 'QuestionAsked') await this.ask(e, d);
      else await this.end(e, d);
    } catch (err) {
      if (isCurable(err)) throw err;
      this.log.warn(`Slack refused the message for question ${d.questionId} (${slackPlatformError(err)}); not retried`);
    }
  }

  private async ask(
    e: AuditEvent,
    d: { questionId: string; text?: string; choices?: string[]; allowFreeText?: boolean; expiresAt?: string },
  ): Promise<void> {
    if (await this.messages.find(e.tenant, d.questionId)) return; // redelivered: posted already
    const blocks: SlackBlock[] = [
      { type: 'header', text: { type: 'plain_text', text: 'An agent asks' } },
      { type: 'section', text: { type: 'mrkdwn', text: escapeMrkdwn(d.text ?? '').slice(0, 2900) } },
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: `Agent \`${escapeMrkdwn(String(e.actor.id))}\` · conversation \`${escapeMrkdwn(e.conversationId ?? '')}\` · question \`${d.questionId}\``,
          },
        ],
      },
    ];
    const buttons = (d.choices ?? []).slice(0, 20).map((choice, i) => ({
      type: 'button',
      action_id: `${ANSWER_ACTION}:${i}`,
      value: JSON.stringify({ q: d.questionId, a: choice }),
      text: { type: 'plain_text', text: choice.slice(0, 75) },
    }));
    if (!d.choices?.length || d.allowFreeText)
      buttons.push({
        type: 'button',
        action_id: ANSWER_TEXT_ACTION,
        value: JSON.stringify({ q: d.questionId }),
        text: { type: 'plain_text', text: 'Answer…' },
      });
    // Slack allows 25 elements per actions block; 20 choices and one "Answer…" fit.
    blocks.push({ type: 'actions', block_id: 'tollgate_answer', elements: buttons });
    const posted = await this.slack.chat.postMessage({
      channel: slackRoutes(this.config.slack!)[e.tenant],
      text: `An agent asks: ${d.text ?? ''}`.slice(0, 3000),
      blocks,
      unfurl_links: false,
      unfurl_media: false,
    });
    if (!posted.channel || !posted.ts) throw new Error('chat.postMessage answered without channel and ts');
    await this.messages.save(e.tenant, d.questionId, { channelId: posted.channel, ts: posted.ts, conversation: null });
  }

  private async end(
    e: AuditEvent,
    d: { questionId: string; answer?: string; by?: string; via?: string; reason?: string },
  ): Promise<void> {
    const ref = await this.messages.find(e.tenant, d.questionId);
    if (!ref || ref.outcome) return;
    const actor = e.actor as { id?: string; name?: string };
    const line =
      e.type === 'QuestionAnswered'
        ? `:speech_balloon: *Answered* by ${escapeMrkdwn(actor.name ?? d.by ?? '?')} via ${escapeMrkdwn(d.via ?? '?')}:\n>${escapeMrkdwn(d.answer ?? '').replace(/\n/g, '\n>')}`
        : e.type === 'QuestionExpired'
          ? ':hourglass: *Expired*: nobody answered in time'
          : `:octagonal_sign: *Cancelled*${d.reason ? `: ${escapeMrkdwn(d.reason)}` : ''}`;
    await this.slack.chat.update({
      channel: ref.channelId,
      ts: ref.ts,
      text: line.replace(/[*:>]/g, '').slice(0, 3000),
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: line.slice(0, 2900) } }],
    });
    await this.messages.markOutcome(e.tenant, d.questionId, e.type);
  }

  /** Whether a Slack interaction is an answer to a question (a choice, "Answer…", or the answer modal). */
  handles(p: { type: string; actions?: Array<{ action_id?: string }>; view?: { callback_id?: string } }): boolean {
    if (p.type === 'block_actions') return !!p.actions?.some((a) => a.action_id?.startsWith(ANSWER_ACTION));
    return p.type === 'view_submission' && p.view?.callback_id === ANSWER_MODAL;
  }

  /**
   * A choice answers at once; "Answer…" opens a modal with a text box, whose submission answers. A refusal (not one
   * who may answer, answered already) is told to the person alone, or shown in the modal.
   */
  async interact(p: {
    type: string;
    trigger_id?: string;
    user?: { id?: string; name?: string; username?: string };
    channel?: { id?: string };
    container?: { channel_id?: string; message_ts?: string };
    message?: { ts?: string };
    actions?: Array<{ action_id?: string; value?: string }>;
    view?: {
      private_metadata?: string;
      state?: { values?: Record<string, Record<string, { value?: string | null }>> };
    };
  }): Promise<undefined | { response_action: 'errors'; errors: Record<string, string> }> {
    const channel = p.channel?.id ?? p.container?.channel_id;
    if (p.type === 'view_submission') {
      const meta = parse<Meta>(p.view?.private_metadata);
      const text = p.view?.state?.values?.[ANSWER_BLOCK]?.[ANSWER_INPUT]?.value?.trim();
      if (!meta?.questionId) return undefined;
      if (!text) return { response_action: 'errors', errors: { [ANSWER_BLOCK]: 'Write an answer.' } };
      const { who, refused } = await this.whoIn(p.user, meta, meta.questionId);
      if (!who) return { response_action: 'errors', errors: { [ANSWER_BLOCK]: refused.slice(0, 150) } };
      const problem = await this.answer(who, meta.questionId, text);
      return problem ? { response_action: 'errors', errors: { [ANSWER_BLOCK]: problem.slice(0, 150) } } : undefined;
    }
    const action = p.actions?.find((a) => a.action_id?.startsWith(ANSWER_ACTION));
    const value = parse<{ q?: string; a?: string }>(action?.value);
    if (!action || !value?.q) return undefined;
    const { who, refused } = await this.whoIn(
      p.user,
      { channel, ts: p.message?.ts ?? p.container?.message_ts },
      value.q,
    );
    if (!who) return void (await this.tell(p.user?.id, channel, refused));
    if (action.action_id === ANSWER_TEXT_ACTION) {
      if (!p.trigger_id) return undefined;
      await this.slack.views.open({
        trigger_id: p.trigger_id,
        view: answerModal({ questionId: value.q, channel, ts: p.message?.ts ?? p.container?.message_ts }) as never,
      });
      return undefined;
    }
    const problem = await this.answer(who, value.q, value.a ?? '');
    if (problem) await this.tell(p.user?.id, channel, problem);
    return undefined;
  }

  /**
   * The Slack user as a person of the tenant the question's message was posted for (one Slack app may serve several
   * tenants), or what to tell them. A message Tollgate did not post about this question answers nothing.
   */
  private async whoIn(
    user: { id?: string } | undefined,
    where: { channel?: string; ts?: string },
    questionId: string,
  ): Promise<{ who: Principal | null; refused: string }> {
    const found = where.channel && where.ts ? await this.messages.findByMessage(where.channel, where.ts) : null;
    if (!found || found.id !== questionId)
      return {
        who: null,
        refused: 'Tollgate refused: this message is not the one Tollgate posted about this question.',
      };
    const person = await this.people.whoIs(user, found.tenantId);
    if (person?.kind === 'person') return { who: person.principal, refused: '' };
    return { who: null, refused: person?.tell ?? 'Tollgate refused: Slack did not say who you are.' };
  }

  private async answer(who: Principal, questionId: string, text: string): Promise<string | undefined> {
    try {
      await this.commands.execute(new AnswerQuestionCommand(who, questionId, text, 'slack'));
      return undefined;
    } catch (e) {
      if (e instanceof DomainError) return `Tollgate refused: ${e.message}`;
      throw e;
    }
  }

  private async tell(user: string | undefined, channel: string | undefined, text: string): Promise<void> {
    if (user && channel) await this.slack.chat.postEphemeral({ channel, user, text });
  }
}

function answerModal(meta: Meta) {
  return {
    type: 'modal' as const,
    callback_id: ANSWER_MODAL,
    private_metadata: JSON.stringify(meta),
    title: { type: 'plain_text' as const, text: 'Answer the agent' },
    submit: { type: 'plain_text' as const, text: 'Answer' },
    close: { type: 'plain_text' as const, text: 'Cancel' },
    blocks: [
      {
        type: 'input',
        block_id: ANSWER_BLOCK,
        label: { type: 'plain_text', text: 'Your answer' },
        element: { type: 'plain_text_input', action_id: ANSWER_INPUT, multiline: true, max_length: 4000 },
      },
    ],
  };
}

function parse<T>(raw: string | undefined): T | null {
  try {
    const v = JSON.parse(raw ?? '') as unknown;
    return v && typeof v === 'object' ? (v as T) : null;
  } catch {
    return null;
  }
}
