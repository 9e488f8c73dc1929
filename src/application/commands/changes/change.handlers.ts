import { Inject } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Grant } from '../../../domain/grant/grant.aggregate';
import { PendingChange } from '../../../domain/governance/pending-change.aggregate';
import {
  ChangeNotFoundError,
  HaltMovedOnError,
  PolicyMovedOnError,
} from '../../../domain/governance/pending-change.errors';
import { haltTarget, HaltScope } from '../../../domain/halt/halt.aggregate';
import { Actor, Channel, personActor, Principal } from '../../../domain/shared/actor';
import { DomainError } from '../../../domain/shared/domain-error';
import {
  CLOCK,
  Clock,
  GRANTS,
  GrantRepository,
  HALTS,
  HaltRepository,
  IDS,
  IdGenerator,
  POLICIES,
  PolicyRepository,
  UNIT_OF_WORK,
  UnitOfWork,
} from '../../ports';
import { PENDING_CHANGES, PendingChangeRepository } from '../../ports/pending-change.port';
import { grantView } from '../../queries/list-grants/grant.view';
import { pendingChangeView } from '../../views/change.view';
import { PutPolicyCommand } from '../put-policy/put-policy.command';
import { RollBackPolicyCommand } from '../roll-back-policy/roll-back-policy.command';
import { ResumeCommand } from '../halt/halt.command';
import { CreateWebhookCommand } from '../webhooks/webhook.commands';
import {
  ApproveChangeCommand,
  ApproveChangeResult,
  ExpireChangesCommand,
  RejectChangeCommand,
} from './change.commands';

/** The proposer as the principal the original request came from (tenant, id, name, roles). */
function proposerPrincipal(tenantId: string, a: Actor): Principal {
  return {
    id: a.id,
    tenant: tenantId,
    roles: a.roles ?? [],
    ...(a.name ? { name: a.name } : {}),
    ...(a.channelUser ? { channelUser: a.channelUser } : {}),
  };
}

/**
 * Approving under the change's row lock: of two approvals at once, the second waits, then finds the change applied
 * (409 change_not_pending); the save is also conditional on the version read. Applying runs the original command
 * in this same transaction, so the change is applied and marked applied together, or neither.
 */
@CommandHandler(ApproveChangeCommand)
export class ApproveChangeHandler implements ICommandHandler<ApproveChangeCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(PENDING_CHANGES) private readonly changes: PendingChangeRepository,
    @Inject(POLICIES) private readonly policies: PolicyRepository,
    @Inject(GRANTS) private readonly grants: GrantRepository,
    @Inject(HALTS) private readonly halts: HaltRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(IDS) private readonly ids: IdGenerator,
    private readonly commands: CommandBus,
  ) {}

  async execute({ principal: p, id, via }: ApproveChangeCommand): Promise<ApproveChangeResult> {
    const by = personActor(p, via);
    const outcome = await this.uow.run(async () => {
      const change = await this.changes.find(p.tenant, id, { lock: true });
      if (!change) throw new ChangeNotFoundError(id);
      const at = this.clock.now();
      // A deadline passed is recorded, then reported (the refusal must not roll the record back).
      if (change.expireIfDue(at)) {
        await this.changes.save(change);
        return { refused: change.statusAt(at) };
      }
      // A policy change made against a version no longer in force would undo what came between: closed, then reported.
      const moved = change.snapshot().status === 'pending' ? await this.movedOn(change) : null;
      if (moved) {
        change.supersede(at, 'policy_moved_on', `version ${moved.current} is in force`);
        await this.changes.save(change);
        return { error: new PolicyMovedOnError(moved.base, moved.current) };
      }
      // A resume proposed for one halt must not lift a newer one pulled after it was lifted: closed, then reported.
      const haltMoved = change.snapshot().status === 'pending' ? await this.haltMovedOn(change) : null;
      if (haltMoved) {
        change.supersede(
          at,
          'halt_moved_on',
          haltMoved.current ? `a newer halt (pulled ${haltMoved.current}) is in force` : 'the halt was lifted already',
        );
        await this.changes.save(change);
        return { error: new HaltMovedOnError(haltMoved.haltedAt, haltMoved.current) };
      }
      const { ready } = change.approve(by, at);
      if (!ready) {
        await this.changes.save(change);
        return { change, applied: false as const };
      }
      const result = await this.apply(change, at);
      change.applied(by, at);
      await this.changes.save(change);
      return { change, applied: true as const, result };
    });
    if ('error' in outcome) throw outcome.error;
    if ('refused' in outcome) {
      const change = await this.changes.find(p.tenant, id);
      throw new DomainError('change_not_pending', 'conflict', `Change ${id} is expired: it can no longer be approved`, {
        status: change?.statusAt(this.clock.now()) ?? 'expired',
      });
    }
    return {
      change: pendingChangeView(outcome.change, this.clock.now()),
      applied: outcome.applied,
      result: outcome.result,
    };
  }

  private async movedOn(change: PendingChange): Promise<{ base: number; current: number } | null> {
    const s = change.snapshot();
    if (s.baseVersion === null) return null;
    const current = (await this.policies.current(s.tenantId, { lock: true })).policyVersion;
    return current === s.baseVersion ? null : { base: s.baseVersion, current };
  }

  /** For a resume that names the halt it was proposed for: the halt in force now, when it is another (or none). */
  private async haltMovedOn(change: PendingChange): Promise<{ haltedAt: string; current: string | null } | null> {
    const s = change.snapshot();
    const payload = s.payload as { scope?: HaltScope; id?: string | null; haltedAt?: unknown };
    if (s.kind !== 'resume' || typeof payload.haltedAt !== 'string') return null; // proposed before halts were named
    const halt = await this.halts.find(s.tenantId, haltTarget(payload.scope as HaltScope, payload.id ?? undefined), {
      lock: true,
    });
    const current = halt ? halt.snapshot().at.toISOString() : null;
    return current === payload.haltedAt ? null : { haltedAt: payload.haltedAt, current };
  }

  /** Runs the original request in the proposer's name, marked as this approved change (the gate lets it through). */
  private async apply(change: PendingChange, at: Date): Promise<unknown> {
    const s = change.snapshot();
    const payload = s.payload as Record<string, never>;
    const proposer = proposerPrincipal(s.tenantId, s.proposedBy);
    switch (s.kind) {
      case 'policy_update':
        return (
          await this.commands.execute(
            new PutPolicyCommand(s.tenantId, s.proposedBy, payload.document, {
              source: (payload.source as string | undefined) ?? 'api',
              approvedChange: s.id,
            }),
          )
        ).policy;
      case 'policy_rollback':
        return this.commands.execute(
          new RollBackPolicyCommand(s.tenantId, s.proposedBy, payload.version, payload.reason, s.id),
        );
      case 'resume':
        return this.commands.execute(
          new ResumeCommand(
            proposer,
            haltTarget(payload.scope as HaltScope, (payload.id as string | null) ?? undefined),
            payload.reason,
            (payload.via as Channel | undefined) ?? s.proposedBy.via,
            s.id,
          ),
        );
      case 'webhook_create': {
        const secret = await this.changes.secretOf(s.tenantId, s.id);
        if (!secret) throw new Error(`pending change ${s.id} lost its webhook secret`);
        const made = await this.commands.execute(
          new CreateWebhookCommand(
            proposer,
            { url: payload.url, events: payload.events, description: payload.description, secret },
            s.id,
          ),
        );
        if ('pendingChange' in made) throw new Error('an approved change was held again');
        const { tenantId: _t, createdAt, ...rest } = made;
        return { ...rest, createdAt: createdAt.toISOString() };
      }
      case 'tenant_grant': {
        const grant = Grant.create({
          id: this.ids.next('grant'),
          tenantId: s.tenantId,
          toolName: payload.toolName,
          scope: 'tenant',
          conversationId: payload.conversationId,
          agentId: payload.agentId,
          by: s.proposedBy,
          toolCallId: payload.toolCallId,
          at,
          ...(payload.expiresIn !== undefined ? { expiresIn: payload.expiresIn as number } : {}),
          ...(payload.args !== undefined ? { args: payload.args as Record<string, string> } : {}),
          ...(payload.uses !== undefined ? { uses: payload.uses as number } : {}),
        });
        await this.grants.save(grant);
        return grantView(grant, at);
      }
    }
  }
}

@CommandHandler(RejectChangeCommand)
export class RejectChangeHandler implements ICommandHandler<RejectChangeCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(PENDING_CHANGES) private readonly changes: PendingChangeRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ principal: p, id, reason, via }: RejectChangeCommand) {
    const outcome = await this.uow.run(async () => {
      const change = await this.changes.find(p.tenant, id, { lock: true });
      if (!change) throw new ChangeNotFoundError(id);
      const at = this.clock.now();
      if (change.expireIfDue(at)) {
        await this.changes.save(change);
        return { refused: true as const };
      }
      change.reject(personActor(p, via), at, reason);
      await this.changes.save(change);
      return { change };
    });
    if ('refused' in outcome)
      throw new DomainError('change_not_pending', 'conflict', `Change ${id} is expired: it can no longer be rejected`, {
        status: 'expired',
      });
    return pendingChangeView(outcome.change, this.clock.now());
  }
}

/** Records the deadlines that passed, one change per unit of work (each under its lock). */
@CommandHandler(ExpireChangesCommand)
export class ExpireChangesHandler implements ICommandHandler<ExpireChangesCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(PENDING_CHANGES) private readonly changes: PendingChangeRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(): Promise<number> {
    let n = 0;
    for (const { tenantId, id } of await this.changes.due(this.clock.now(), 100)) {
      await this.uow.run(async () => {
        const change = await this.changes.find(tenantId, id, { lock: true });
        if (change?.expireIfDue(this.clock.now())) {
          await this.changes.save(change);
          n++;
        }
      });
    }
    return n;
  }
}
