import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler, IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import {
  AmbiguousPersonError,
  DelegationByAgentError,
  NoDelegationError,
  UnknownPersonError,
} from '../../../domain/person/delegation.errors';
import { DelegationRequest, endDelegation, isOver, setDelegation } from '../../../domain/person/delegation';
import { sightingOf, type Person } from '../../../domain/person/person';
import { Channel, hasAnyRole, isAgent, Principal } from '../../../domain/shared/actor';
import { DomainError } from '../../../domain/shared/domain-error';
import { CLOCK, Clock, UNIT_OF_WORK, UnitOfWork } from '../../ports';
import { DELEGATIONS, DelegationRepository } from '../../ports/delegation.port';
import { PERSONS, PersonRepository } from '../../ports/person.port';
import { DelegationPageView, delegationView, DelegationView } from '../../views/delegation.view';

/*
 * A person's delegation (PUT/GET/DELETE /v1/me/delegation) and the tenant's, for oversight (GET /v1/delegations).
 * The rules are the domain's (domain/person/delegation.ts); these load, call them once and save, in one unit of
 * work with the audit event (DelegationSet, DelegationEnded).
 */

function personOnly(p: Principal): void {
  if (isAgent(p)) throw new DelegationByAgentError();
}

export class SetDelegationCommand extends Command<DelegationView> {
  constructor(
    readonly principal: Principal & { via: Channel },
    /** The delegate: a person's id, or an email exactly one person with a role has (case-insensitively). */
    readonly to: string,
    readonly request: DelegationRequest,
  ) {
    super();
  }
}

export class EndDelegationCommand extends Command<void> {
  constructor(readonly principal: Principal & { via: Channel }) {
    super();
  }
}

export class GetDelegationQuery extends Query<DelegationView> {
  constructor(readonly principal: Principal) {
    super();
  }
}

export class ListDelegationsQuery extends Query<DelegationPageView> {
  constructor(
    readonly principal: Principal,
    readonly page: { cursor?: string; limit: number },
  ) {
    super();
  }
}

/** Sets (or replaces) the caller's delegation; the same request again changes nothing and records nothing. */
@CommandHandler(SetDelegationCommand)
export class SetDelegationHandler implements ICommandHandler<SetDelegationCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(DELEGATIONS) private readonly delegations: DelegationRepository,
    @Inject(PERSONS) private readonly persons: PersonRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ principal: p, to, request }: SetDelegationCommand): Promise<DelegationView> {
    personOnly(p);
    return this.uow.run(async () => {
      const at = this.clock.now();
      // The delegator's record must exist (the table refers to it), as they are now. Writing it also locks it
      // until commit, so two requests of one person take their turns.
      await this.persons.seen(sightingOf(p)!, at);
      const delegate = await this.delegate(p.tenant, to);
      const previous = await this.delegations.of(p.tenant, p.id, { lock: true });
      const facts = {
        person: delegate,
        isAgent: await this.delegations.isAgent(p.tenant, delegate.id),
        delegators: await this.delegations.countTo(p.tenant, delegate.id, at, p.id),
      };
      const change = setDelegation(p, facts, request, previous, at);
      if (change.event) {
        await this.delegations.put(change.delegation);
        await this.delegations.record([change.event]);
      }
      return delegationView(change.delegation, delegate.name, at);
    });
  }

  /** By id first (a `sub` may look like an email); else by an email exactly one person with a role has. */
  private async delegate(tenantId: string, to: string): Promise<Person> {
    const byId = await this.persons.find(tenantId, to);
    if (byId) return byId;
    if (!to.includes('@')) throw new UnknownPersonError(to);
    const byEmail = await this.persons.withEmail(tenantId, to);
    if (byEmail.length > 1) throw new AmbiguousPersonError(to);
    if (byEmail.length === 0) throw new UnknownPersonError(to);
    return byEmail[0];
  }
}

/** Ends the caller's delegation now (or withdraws one to come); without one, nothing happens. */
@CommandHandler(EndDelegationCommand)
export class EndDelegationHandler implements ICommandHandler<EndDelegationCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(DELEGATIONS) private readonly delegations: DelegationRepository,
    @Inject(PERSONS) private readonly persons: PersonRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ principal: p }: EndDelegationCommand): Promise<void> {
    personOnly(p);
    await this.uow.run(async () => {
      const at = this.clock.now();
      const current = await this.delegations.of(p.tenant, p.id, { lock: true });
      if (!current) return;
      const ended = endDelegation(p, current, await this.persons.find(p.tenant, current.toPersonId), at);
      // A row past its end is removed too: it applied to nothing any more.
      await this.delegations.remove(p.tenant, p.id);
      if (ended) await this.delegations.record([ended]);
    });
  }
}

@QueryHandler(GetDelegationQuery)
export class GetDelegationHandler implements IQueryHandler<GetDelegationQuery> {
  constructor(
    @Inject(DELEGATIONS) private readonly delegations: DelegationRepository,
    @Inject(PERSONS) private readonly persons: PersonRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ principal: p }: GetDelegationQuery): Promise<DelegationView> {
    personOnly(p);
    const at = this.clock.now();
    const d = await this.delegations.of(p.tenant, p.id);
    // One over has stopped applying: the person has none.
    if (!d || isOver(d, at)) throw new NoDelegationError();
    return delegationView(d, (await this.persons.find(p.tenant, d.toPersonId))?.name, at);
  }
}

/** Admins and auditors oversee who decides for whom: the tenant's delegations that hold or are to come. */
@QueryHandler(ListDelegationsQuery)
export class ListDelegationsHandler implements IQueryHandler<ListDelegationsQuery> {
  constructor(
    @Inject(DELEGATIONS) private readonly delegations: DelegationRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ principal: p, page }: ListDelegationsQuery): Promise<DelegationPageView> {
    if (isAgent(p) || !hasAnyRole(p, ['admin', 'auditor']))
      throw new DomainError('forbidden', 'forbidden', "Only admins and auditors see the tenant's delegations");
    const at = this.clock.now();
    const { items, nextCursor } = await this.delegations.list(p.tenant, at, page);
    return {
      items: items.map(({ delegation: d, delegatorName, delegateName }) => ({
        person: { id: d.personId, ...(delegatorName ? { name: delegatorName } : {}) },
        ...delegationView(d, delegateName, at),
      })),
      nextCursor,
    };
  }
}
