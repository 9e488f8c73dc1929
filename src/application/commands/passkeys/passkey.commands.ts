import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler, IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import {
  OwnPasskeyRevocationError,
  PasskeyNotFoundError,
  PasskeysForPersonsOnlyError,
  PasskeysOfOthersError,
} from '../../../domain/person/passkey.errors';
import { PasskeyRegistered, PasskeyRemoved } from '../../../domain/person/person.events';
import { sightingOf } from '../../../domain/person/person';
import { isAgent, personActor, Principal } from '../../../domain/shared/actor';
import { CLOCK, Clock, UNIT_OF_WORK, UnitOfWork } from '../../ports';
import {
  AssertionOptions,
  PASSKEYS,
  PasskeyChange,
  Passkeys,
  PasskeySummary,
  WebAuthnJson,
} from '../../ports/passkey.port';
import { PERSONS, PersonRepository } from '../../ports/person.port';

/*
 * A person's passkeys (GET/POST/DELETE /v1/me/passkeys): thin handlers around the Passkeys port, which checks
 * the WebAuthn side. Adding one when one is held, and removing one, need an assertion with a passkey held
 * (domain/person/rules/passkey-enrolment). Registrations and removals are recorded in the audit trail.
 */

function personOnly(p: Principal): void {
  if (isAgent(p)) throw new PasskeysForPersonsOnlyError();
}

export class ListPasskeysQuery extends Query<PasskeySummary[]> {
  constructor(readonly principal: Principal) {
    super();
  }
}

/** Options to register a passkey (and to assert with one held, when there is one). Stores their challenges. */
export class PasskeyRegistrationOptionsCommand extends Command<{
  publicKey: WebAuthnJson;
  assertion?: AssertionOptions;
}> {
  constructor(readonly principal: Principal) {
    super();
  }
}

/** Options for the assertion that removing a passkey needs (`revoke`: an admin's removal of another person's). */
export class PasskeyAssertionOptionsCommand extends Command<AssertionOptions> {
  constructor(
    readonly principal: Principal,
    readonly purpose: PasskeyChange = 'remove',
  ) {
    super();
  }
}

export class RegisterPasskeyCommand extends Command<PasskeySummary> {
  constructor(
    readonly principal: Principal,
    readonly input: { response: WebAuthnJson; name?: string; assertion?: WebAuthnJson },
  ) {
    super();
  }
}

export class RemovePasskeyCommand extends Command<void> {
  constructor(
    readonly principal: Principal,
    readonly credentialId: string,
    readonly assertion: WebAuthnJson | undefined,
  ) {
    super();
  }
}

@QueryHandler(ListPasskeysQuery)
export class ListPasskeysHandler implements IQueryHandler<ListPasskeysQuery> {
  constructor(@Inject(PASSKEYS) private readonly passkeys: Passkeys) {}

  execute({ principal: p }: ListPasskeysQuery) {
    personOnly(p);
    return this.passkeys.list(p);
  }
}

@CommandHandler(PasskeyRegistrationOptionsCommand)
export class PasskeyRegistrationOptionsHandler implements ICommandHandler<PasskeyRegistrationOptionsCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(PASSKEYS) private readonly passkeys: Passkeys,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ principal: p }: PasskeyRegistrationOptionsCommand) {
    personOnly(p);
    return this.uow.run(() => this.passkeys.registrationOptions(p, this.clock.now()));
  }
}

@CommandHandler(PasskeyAssertionOptionsCommand)
export class PasskeyAssertionOptionsHandler implements ICommandHandler<PasskeyAssertionOptionsCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(PASSKEYS) private readonly passkeys: Passkeys,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ principal: p, purpose }: PasskeyAssertionOptionsCommand) {
    personOnly(p);
    return this.uow.run(() => this.passkeys.manageOptions(p, this.clock.now(), purpose));
  }
}

/**
 * Registers a passkey and records PasskeyRegistered, in one transaction. A refusal is thrown only after the
 * transaction committed the challenges it used up: none answers twice.
 */
@CommandHandler(RegisterPasskeyCommand)
export class RegisterPasskeyHandler implements ICommandHandler<RegisterPasskeyCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(PASSKEYS) private readonly passkeys: Passkeys,
    @Inject(PERSONS) private readonly persons: PersonRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ principal: p, input }: RegisterPasskeyCommand): Promise<PasskeySummary> {
    personOnly(p);
    const result = await this.uow.run(async () => {
      const at = this.clock.now();
      // The passkey belongs to the person's record: make sure it exists (the sighting may not have been written).
      // Writing it also locks the person's row to the end of the transaction, so two registrations at once run
      // one after the other: the second sees the first passkey and needs an assertion with it.
      await this.persons.seen(sightingOf(p)!, at);
      const r = await this.passkeys.register(p, input, at);
      if (!r.ok) return r;
      const k = r.passkey;
      await this.persons.record([
        new PasskeyRegistered(
          { tenantId: p.tenant, at, actor: personActor(p, p.via ?? 'api') },
          {
            personId: p.id,
            credentialId: k.id,
            aaguid: k.aaguid,
            name: k.name,
            backedUp: k.backedUp,
            deviceType: k.deviceType,
            publicKey: k.publicKey,
          },
        ),
      ]);
      return r;
    });
    if (!result.ok) throw result.error;
    const { id, name, aaguid, backedUp, createdAt } = result.passkey;
    return { id, name, aaguid, backedUp, createdAt };
  }
}

/** Removes a passkey and records PasskeyRemoved; a refusal is thrown after commit, as registration's. */
@CommandHandler(RemovePasskeyCommand)
export class RemovePasskeyHandler implements ICommandHandler<RemovePasskeyCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(PASSKEYS) private readonly passkeys: Passkeys,
    @Inject(PERSONS) private readonly persons: PersonRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ principal: p, credentialId, assertion }: RemovePasskeyCommand): Promise<void> {
    personOnly(p);
    const result = await this.uow.run(async () => {
      const at = this.clock.now();
      const r = await this.passkeys.remove(p, credentialId, assertion, at);
      if (r.ok)
        await this.persons.record([
          new PasskeyRemoved(
            { tenantId: p.tenant, at, actor: personActor(p, p.via ?? 'api') },
            { personId: p.id, credentialId, removedBy: p.id },
          ),
        ]);
      return r;
    });
    if (!result.ok) throw result.error;
  }
}

/** An admin's view of a person's passkeys (GET /v1/people/{id}/passkeys): to find the lost one. */
export class ListPersonPasskeysQuery extends Query<PasskeySummary[]> {
  constructor(
    readonly admin: Principal,
    readonly personId: string,
  ) {
    super();
  }
}

@QueryHandler(ListPersonPasskeysQuery)
export class ListPersonPasskeysHandler implements IQueryHandler<ListPersonPasskeysQuery> {
  constructor(@Inject(PASSKEYS) private readonly passkeys: Passkeys) {}

  execute({ admin, personId }: ListPersonPasskeysQuery) {
    mustBeAdmin(admin);
    // The tenant is the admin's own: another tenant's person is no one here.
    return this.passkeys.list({ id: personId, tenant: admin.tenant, roles: [] });
  }
}

/**
 * An admin removes one of another person's passkeys without an assertion: the way back for someone who lost the
 * device that held their only passkey (they register a new one with their session alone). Recorded as
 * PasskeyRemoved with the admin as `removedBy`.
 */
export class RevokePersonPasskeyCommand extends Command<void> {
  constructor(
    readonly admin: Principal,
    readonly personId: string,
    readonly credentialId: string,
    /** An assertion with one of the admin's own passkeys, made for `revoke`. */
    readonly assertion: WebAuthnJson | undefined,
  ) {
    super();
  }
}

@CommandHandler(RevokePersonPasskeyCommand)
export class RevokePersonPasskeyHandler implements ICommandHandler<RevokePersonPasskeyCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(PASSKEYS) private readonly passkeys: Passkeys,
    @Inject(PERSONS) private readonly persons: PersonRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ admin, personId, credentialId, assertion }: RevokePersonPasskeyCommand): Promise<void> {
    mustBeAdmin(admin);
    if (personId === admin.id) throw new OwnPasskeyRevocationError();
    // A refusal still commits: the challenge its assertion answered stays used up.
    const result = await this.uow.run(async () => {
      const at = this.clock.now();
      const r = await this.passkeys.revoke(admin, personId, credentialId, assertion, at);
      if (!r.ok) return r;
      await this.persons.record([
        new PasskeyRemoved(
          { tenantId: admin.tenant, at, actor: personActor(admin, admin.via ?? 'api') },
          { personId, credentialId, removedBy: admin.id },
        ),
      ]);
      return r;
    });
    if (!result.ok) throw result.error;
  }
}

function mustBeAdmin(p: Principal): void {
  if (isAgent(p) || !p.roles.includes('admin')) throw new PasskeysOfOthersError();
}
