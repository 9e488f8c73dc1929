import { Inject, Logger } from '@nestjs/common';
import { CommandBus, EventsHandler, IEventHandler } from '@nestjs/cqrs';
import type { HaltScope } from '../../domain/halt/halt.aggregate';
import { DomainEvent } from '../../domain/shared/domain-event';
import { CancelQuestionsCommand } from '../commands/questions/question.commands';
import { WAITERS, ToolCallWaiters } from '../ports';
import { EventsCommitted } from '../ports/stored-event';

const ENDS_QUESTION = new Set(['QuestionAnswered', 'QuestionExpired', 'QuestionCancelled']);

/** The question a committed event ended, whose long-polls should re-read. */
export function endedQuestion(e: DomainEvent): string | undefined {
  return ENDS_QUESTION.has(e.type) ? (e.data as { questionId?: string }).questionId : undefined;
}

/**
 * After commit: wakes the long-polls of questions that left `pending` (they share the tool calls' waiters, keyed
 * by id), and lets a halt cancel the pending questions of its scope, as the halt cancels pending tool calls.
 * Questions asked while the halt committed are caught by the ask itself, which looks for a halt after its commit.
 */
@EventsHandler(EventsCommitted)
export class QuestionEventsHandler implements IEventHandler<EventsCommitted> {
  private readonly log = new Logger('Questions');

  constructor(
    @Inject(WAITERS) private readonly waiters: ToolCallWaiters,
    private readonly commands: CommandBus,
  ) {}

  handle({ events }: EventsCommitted): void {
    for (const e of events) {
      const id = endedQuestion(e);
      if (id) this.waiters.wake(e.tenantId, id);
      if (e.type === 'Halted') {
        const d = e.data as { scope: HaltScope; id: string | null; reason: string };
        this.commands
          .execute(new CancelQuestionsCommand(e.tenantId, { scope: d.scope, id: d.id ?? '' }, d.reason, e.actor))
          .catch((err: Error) => this.log.warn(`cancelling the questions of a halt failed: ${err.message}`));
      }
    }
  }
}
