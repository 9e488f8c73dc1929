import {
  EndDelegationCommand,
  GetDelegationQuery,
  ListDelegationsQuery,
  SetDelegationCommand,
} from '../../application/commands/delegation/delegation.commands';
import { DelegationByAgentError } from '../../domain/person/delegation.errors';
import { isAgent, type Channel, type Principal } from '../../domain/shared/actor';
import { SetDelegationRequest } from './dto/delegation.dto';
import { ForbiddenError } from './errors';
import { listParams } from './request-params';
import { parseBody } from './validation';

/*
 * The delegation routes, in the one order of checks: who calls (people only: 403 for an agent token before any
 * body is read), then the body (400), then the rules (the domain's codes).
 */

function person(p: Principal): Principal {
  if (isAgent(p)) throw new DelegationByAgentError();
  return p;
}

/** PUT /v1/me/delegation */
export function setDelegation(p: Principal, body: unknown, via: () => Channel): SetDelegationCommand {
  person(p);
  const dto = parseBody(SetDelegationRequest, body);
  return new SetDelegationCommand({ ...p, via: via() }, dto.to, {
    ...(dto.from ? { from: new Date(dto.from) } : {}),
    until: new Date(dto.until),
    ...(dto.reason ? { reason: dto.reason } : {}),
  });
}

/** GET /v1/me/delegation */
export function getDelegation(p: Principal): GetDelegationQuery {
  return new GetDelegationQuery(person(p));
}

/** DELETE /v1/me/delegation */
export function endDelegation(p: Principal, via: () => Channel): EndDelegationCommand {
  person(p);
  return new EndDelegationCommand({ ...p, via: via() });
}

/** GET /v1/delegations: admins and auditors, then the list's parameters. */
export function listDelegations(p: Principal, query: Record<string, unknown>): ListDelegationsQuery {
  if (isAgent(p) || !['admin', 'auditor'].some((r) => p.roles.includes(r)))
    throw new ForbiddenError("Only admins and auditors see the tenant's delegations");
  return new ListDelegationsQuery(p, listParams(query));
}
