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
  SCOPE_BLOCK,
  SCOPE_INPUT,
} from './slack-blocks';
import { SLACK_CLIENT } from './slack-client';
import { SlackQuestions } from './slack-questions';

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

/** A view submission may wait this long for the decision, to show a refusal in the modal; Slack allows 3 s. */
const SUBMISSION_WAIT_MS = 2000;

/**
 * Turns Slack clicks into the same DecideToolCallCommand every channel uses (via `slack`, as
 * `slack:<user id>` in TOLLGATE_SLACK_TENANT with the roles TOLLGATE_SLACK_APPROVERS gives). Slack is
 * answered at once; the decision is applied right after, and the outbox then updates the message.
 * Anyone not mapped, and any refusal (already decided, role lacking), gets an ephemeral message.
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
    const decider = this.decider(p);
    if (!decider)
      return this.refuse(
        p,
        where.channel,
        'You are not a Tollgate approver. Ask an admin to add your Slack user to TOLLGATE_SLACK_APPROVERS.',
      );
    if (actionId === APPROVE_ACTION) {
      await this.decide(decider, toolCallId, { decision: 'approve' }).catch((e) =>
        this.refuse(p, where.channel, refusal(e)),
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
    const decider = this.decider(p);
    if (!decider) return { response_action: 'errors', errors: { [REASON_BLOCK]: 'You are not a Tollgate approver.' } };
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
    const decider = this.decider(p);
    if (!decider) return { response_action: 'errors', errors: { [SCOPE_BLOCK]: 'You are not a Tollgate approver.' } };
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
      (e: unknown) => refusal(e),
    );
    const waited = await Promise.race([
      decided,
      new Promise<'later'>((r) => setTimeout(() => r('later'), SUBMISSION_WAIT_MS).unref()),
    ]);
    if (waited === 'later') {
      // Still running: close the modal now and say so in the channel should it be refused.
      this.later(async () => {
        const problem = await decided;
        if (problem) await this.refuse(p, meta.channel, problem);
      });
      return undefined;
    }
    return waited ? { response_action: 'errors', errors: { [block]: waited.slice(0, 150) } } : undefined;
  }

  private decide(
    decider: Decider,
    toolCallId: string,
    input: { decision: 'approve' | 'reject'; reason?: string },
  ): Promise<unknown> {
    return this.commands.execute(new DecideToolCallCommand(decider, toolCallId, input));
  }

  /** The Slack user as a Tollgate principal, or null when TOLLGATE_SLACK_APPROVERS does not name them. */
  private decider(p: SlackInteraction): Decider | null {
    const id = p.user?.id;
    const roles = id ? this.config.slack!.approvers[id] : undefined;
    if (!id || !roles?.length) return null;
    const name = p.user?.name ?? p.user?.username;
    return { id: `slack:${id}`, tenant: this.config.slack!.tenant, roles, ...(name ? { name } : {}), via: 'slack' };
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

function refusal(e: unknown): string {
  if (e instanceof DomainError) return `Tollgate refused: ${e.message}`;
  throw e;
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
