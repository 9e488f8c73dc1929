import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { mayRevokeDeny, mayRevokeGrant } from '../../../domain/grant/rules/grant-authority';
import { DenyRevokeForbiddenError, DenyRevokeGovernedError } from '../../../domain/grant/rules/deny-revoke.errors';
import { governanceOf } from '../../../domain/governance/governance';
import { GrantNotFoundError, GrantRevokeForbiddenError } from '../../../domain/grant/grant.errors';
import { personActor } from '../../../domain/shared/actor';
import {
  CLOCK,
  Clock,
  GRANTS,
  GrantRepository,
  POLICIES,
  PolicyRepository,
  UNIT_OF_WORK,
  UnitOfWork,
} from '../../ports';
import { grantView } from '../../queries/list-grants/grant.view';
import { RevokeGrantCommand } from './revoke-grant.command';

/**
 * Revokes a standing grant and records GrantRevoked in the same transaction. The row is read locked, so two
 * revocations at once record one event; a grant already revoked is answered as it stands (idempotent).
 * Another tenant's grant is not found: tenants are walls.
 */
@CommandHandler(RevokeGrantCommand)
export class RevokeGrantHandler implements ICommandHandler<RevokeGrantCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(GRANTS) private readonly grants: GrantRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(POLICIES) private readonly policies: PolicyRepository,
  ) {}

  execute({ principal: p, grantId, reason, via }: RevokeGrantCommand) {
    return this.uow.run(async () => {
      const grant = await this.grants.findById(p.tenant, grantId, { lock: true });
      if (!grant) throw new GrantNotFoundError(grantId);
      if (grant.effect === 'deny') {
        // Revoking a deny loosens: its maker or an admin only (never another approver).
        if (!mayRevokeDeny(p, grant.scope, grant.snapshot().createdBy.id))
          throw new DenyRevokeForbiddenError(grant.scope);
        // Four eyes: under governance, lifting a tenant-wide deny is not one admin's act (refused, with the way).
        if (grant.scope === 'tenant' && grant.statusAt(this.clock.now()) === 'active') {
          const governance = governanceOf((await this.policies.current(p.tenant)).document);
          if (governance) throw new DenyRevokeGovernedError(grant.id, governance.quorum);
        }
      } else if (!mayRevokeGrant(p, grant.scope)) throw new GrantRevokeForbiddenError(grant.scope);
      const at = this.clock.now();
      grant.revoke(personActor(p, via), at, reason);
      await this.grants.save(grant);
      return grantView(grant, at);
    });
  }
}
