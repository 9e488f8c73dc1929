import { Inject, Optional } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Halt, HaltTarget } from '../../../domain/halt/halt.aggregate';
import { Actor, personActor } from '../../../domain/shared/actor';
import { visibleConversation } from '../../access';
import {
  CLOCK,
  Clock,
  CONVERSATIONS,
  ConversationRepository,
  HALTS,
  HaltRepository,
  UNCLAIMED,
  UNIT_OF_WORK,
  UnitOfWork,
} from '../../ports';
import { haltView } from '../../views/views';
import { HaltCommand, ResumeCommand } from './halt.command';
import { GovernanceGate } from '../changes/governance-gate';

@CommandHandler(HaltCommand)
export class HaltHandler implements ICommandHandler<HaltCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(HALTS) private readonly halts: HaltRepository,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ principal: p, target, reason, via }: HaltCommand) {
    const by = personActor(p, via);
    const { halt, changed, cancelled } = await this.uow.run(async () => {
      if (target.scope === 'conversation')
        visibleConversation(await this.conversations.findById(p.tenant, target.id), p, target.id);
      const existing = await this.halts.find(p.tenant, target, { lock: true });
      if (existing) return { halt: existing, changed: false, cancelled: [] as string[] }; // halting what is halted changes nothing
      const halt = Halt.pull({ tenantId: p.tenant, target, reason, by, at: this.clock.now() });
      await this.halts.save(halt);
      return { halt, changed: true, cancelled: await this.cancelOpen(p.tenant, target, reason, by) };
    });
    // A proposal that committed while the halt was being written did not see it: a second pass after
    // commit catches it, and every later proposal sees the halt and is refused.
    if (changed) cancelled.push(...(await this.uow.run(() => this.cancelOpen(p.tenant, target, reason, by))));
    return { ...haltView(halt), halted: true, changed, cancelledToolCallIds: cancelled };
  }

  private async cancelOpen(tenantId: string, target: HaltTarget, reason: string, by: Actor): Promise<string[]> {
    const ids: string[] = [];
    for (const conversationId of await this.conversations.findWithOpenCalls(tenantId, target)) {
      const conv = await this.conversations.findById(tenantId, conversationId, {
        lock: true,
        calls: { statuses: UNCLAIMED },
      });
      if (!conv) continue;
      const cancelled = conv.cancelOpen(reason, by, this.clock.now());
      if (cancelled.length > 0) await this.conversations.save(conv);
      ids.push(...cancelled.map((c) => c.id));
    }
    return ids;
  }
}

@CommandHandler(ResumeCommand)
export class ResumeHandler implements ICommandHandler<ResumeCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(HALTS) private readonly halts: HaltRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    // Bound by the composition root (governance.composition.ts); optional so the unit tests' wiring stays short.
    @Optional() private readonly gate?: GovernanceGate,
  ) {}

  execute({ principal: p, target, reason, via, approvedChange }: ResumeCommand) {
    return this.uow.run(async () => {
      const halt = await this.halts.find(p.tenant, target, { lock: true });
      if (!halt) return { scope: target.scope, id: target.id || null, halted: false, changed: false }; // resuming what is not halted changes nothing
      // Four eyes: under `governance`, the halt stands until another admin approves the resume.
      const held = approvedChange
        ? null
        : await this.gate?.hold({
            tenantId: p.tenant,
            by: personActor(p, via),
            kind: 'resume',
            summary: `Resume ${target.scope === 'tenant' ? 'the whole tenant' : `${target.scope} ${target.id}`} (halted: ${halt.snapshot().reason})${reason ? `: ${reason}` : ''}`,
            // The halt's identity (when it was pulled): approving this after the halt was lifted and pulled again
            // must not lift the newer halt (closed as halt_moved_on instead).
            payload: {
              scope: target.scope,
              id: target.id || null,
              ...(reason ? { reason } : {}),
              via,
              haltedAt: halt.snapshot().at.toISOString(),
            },
          });
      if (held) return { scope: target.scope, id: target.id || null, halted: true, changed: false, ...held };
      halt.resume(personActor(p, via), this.clock.now(), reason);
      await this.halts.save(halt);
      return { scope: target.scope, id: target.id || null, halted: false, changed: true };
    });
  }
}
