import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { DelegatedAuthority } from '../../application/persons/delegated-authority';
import { DecideToolCallCommand } from '../../application/commands/decide-tool-call/decide-tool-call.command';
import { CLOCK, Clock, CONVERSATIONS, ConversationRepository } from '../../application/ports';
import { PERSONS, PersonRepository } from '../../application/ports/person.port';
import { toolCallView, type ToolCallView } from '../../application/views/views';
import { approvingArguments } from '../../domain/conversation/rules/step-up';
import type { Decider } from '../../domain/conversation/tool-call.entity';
import type { Person } from '../../domain/person/person';
import { staleSignIn } from '../../domain/person/rules/channel-link';
import { DomainError } from '../../domain/shared/domain-error';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import { digestJson } from '../../infrastructure/persistence/event-store';
import { toProblem } from '../api/problem';
import { ActionLinks } from './action-links';
import { OpenedAction, SignedActionTokens } from './action-tokens';
import { ActionUses } from './action-uses';

/** A refusal, as a problem: a stable code, an HTTP status, a sentence for people, and the card to go on from. */
export interface ActionRefusal {
  kind: 'refused';
  status: number;
  code: string;
  title: string;
  detail: string;
  card?: string;
}

/** A usable token: who may do what to which call, as the confirmation page shows it. */
export interface ActionReady {
  kind: 'ready';
  action: OpenedAction;
  person: Person;
  call: ToolCallView;
  agentId: string;
  card: string;
  /** The arguments the token was issued for (their digest matched): an approval checks them again under the lock. */
  shown: Record<string, unknown>;
}

export interface ActionDone {
  kind: 'done';
  action: OpenedAction;
  call: ToolCallView;
  card: string;
}

/** Reasons a rejection from a link may carry: people's words, bounded like the API's. */
export const MAX_REASON = 2000;
const SWEEP_EVERY_MS = 3600_000;

/**
 * Uses single-use action tokens (push notification actions, email links). Checked in this order, each with its own
 * refusal: the signature, the expiry, the person (known, with a sign-in younger than TOLLGATE_PERSON_MAX_AGE), the
 * call (still waiting), the arguments (the digest the person was shown is still what an approval would approve),
 * the right to decide; then the token is spent (one insert: of two uses at once one wins) and the decision made as
 * that person, `via` push or email, through the same DecideToolCallCommand as every channel. Looking (GET, HEAD)
 * never spends or decides: mail scanners follow links.
 */
@Injectable()
export class ActionDesk implements OnModuleInit, OnModuleDestroy {
  private readonly log = new Logger('Actions');
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly tokens: SignedActionTokens,
    private readonly uses: ActionUses,
    private readonly links: ActionLinks,
    private readonly commands: CommandBus,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(PERSONS) private readonly persons: PersonRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
    private readonly delegated: DelegatedAuthority,
  ) {}

  onModuleInit(): void {
    this.sweeper = setInterval(() => {
      this.uses.sweep(this.clock.now()).catch((e: unknown) => this.log.warn(`sweep failed: ${(e as Error).message}`));
    }, SWEEP_EVERY_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }

  /** What the token would do, or why it cannot: nothing is spent. */
  async look(token: string): Promise<ActionReady | ActionRefusal> {
    const action = await this.tokens.open(token);
    if (!action)
      return refusal(
        400,
        'action_token_invalid',
        'This link is not valid',
        'Tollgate did not issue this link, or it was cut short (copy the whole link from the message).',
      );
    const card = this.links.cardUrl(action.toolCallId);
    if (action.expiresAt.getTime() <= this.clock.now().getTime())
      return refusal(
        410,
        'action_token_expired',
        'This link has expired',
        'It lived as long as the call was to wait. Open the call in the Tollgate inbox to see where it stands.',
        card,
      );
    // A replay is told it is one, whatever became of the call since.
    if (await this.uses.spent(action))
      return refusal(
        409,
        'action_token_used',
        'This link was used already',
        'Each Approve or Reject link works once. Open the card to see where the call stands.',
        card,
      );
    const person = await this.persons.find(action.tenant, action.person);
    if (!person)
      return refusal(403, 'unknown_person', 'Tollgate does not know you', `No person "${action.person}" is on record.`);
    const stale = staleSignIn(person, this.clock.now(), this.config.personMaxAgeSeconds);
    if (stale)
      return refusal(
        403,
        'stale_person',
        'Sign in to Tollgate again first',
        `Your roles are trusted for as long as your sign-in is recent: ${stale.reason}. Sign in to the Tollgate inbox, then decide there or use this link again.`,
        card,
      );
    const conversation = await this.conversations.findByToolCallId(action.tenant, action.toolCallId);
    const call = conversation?.findCall(action.toolCallId);
    if (!conversation || !call)
      return refusal(404, 'not_found', 'This call is gone', `Tool call ${action.toolCallId} is not on record.`);
    const view = toolCallView(call.snapshot());
    if (call.status !== 'pending') {
      const d = view.decision;
      const who = d ? ` by ${d.by.name ?? d.by.id} (${d.by.via})` : '';
      return refusal(
        409,
        'already_decided',
        'This call is already decided',
        `Tool call ${call.id} is ${call.status}${who}. Nothing was changed.`,
        card,
      );
    }
    const approving = approvingArguments(call, {});
    if (digestJson(approving) !== action.argumentsDigest)
      return refusal(
        409,
        'arguments_changed',
        'The arguments have changed',
        'Someone edited the arguments after this message was sent, so this link no longer applies. Open the card to see what would run now.',
        card,
      );
    // Their own rights, or those a delegation lends them now (the decision is then recorded on the delegator's behalf).
    const decider = this.decider(person, action);
    const delegators = await this.delegated.of(decider, this.clock.now());
    if (!conversation.mayDecide(decider, call, delegators))
      return refusal(
        403,
        'forbidden',
        'You may not decide this call',
        `Deciding it needs one of: ${(call.approval?.approvers ?? []).join(', ')}.`,
        card,
      );
    return { kind: 'ready', action, person, call: view, agentId: conversation.agentId, card, shown: approving };
  }

  /** Uses the token once: decides, or says why not. */
  async use(token: string, reason?: string): Promise<ActionDone | ActionRefusal> {
    const ready = await this.look(token);
    if (ready.kind === 'refused') return ready;
    const { action, person, card, shown } = ready;
    if (!(await this.uses.spend(action, this.clock.now())))
      return refusal(
        409,
        'action_token_used',
        'This link was used already',
        'Each Approve or Reject link works once. Open the card to see where the call stands.',
        card,
      );
    const input =
      action.decision === 'approve'
        ? { decision: 'approve' as const }
        : {
            decision: 'reject' as const,
            reason:
              reason?.trim().slice(0, MAX_REASON) ||
              `Rejected from ${action.via === 'push' ? 'a notification' : 'an email'}`,
          };
    let decided: ToolCallView;
    try {
      decided = await this.commands.execute(
        new DecideToolCallCommand(this.decider(person, action), action.toolCallId, input, {}, undefined, shown),
      );
    } catch (e) {
      // A refusal stands (trying again changes nothing); anything else gives the token back for another try.
      if (!(e instanceof DomainError)) await this.uses.unspend(action).catch(() => undefined);
      const p = toProblem(e);
      if (p.status >= 500) throw e;
      return refusal(p.status, p.code, 'Tollgate refused this decision', p.detail ?? p.title, card);
    }
    return { kind: 'done', action, call: decided, card };
  }

  /** The person as they decide through this channel: the roles of their record, never the link's. */
  private decider(person: Person, action: OpenedAction): Decider {
    return {
      id: person.id,
      tenant: person.tenantId,
      roles: [...person.roles],
      ...(person.name ? { name: person.name } : {}),
      ...(person.email ? { email: person.email } : {}),
      via: action.via,
    };
  }
}

function refusal(status: number, code: string, title: string, detail: string, card?: string): ActionRefusal {
  return { kind: 'refused', status, code, title, detail, ...(card ? { card } : {}) };
}
