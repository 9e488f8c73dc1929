import { holdsAt, type Delegation } from '../../domain/person/delegation';
import type { OnBehalfOf } from '../../domain/shared/actor';

/** A person's delegation as the API shows it (GET/PUT /v1/me/delegation). */
export interface DelegationView {
  /** The delegate: who decides for the person while it holds. */
  to: OnBehalfOf;
  from: string;
  until: string;
  reason?: string;
  /** It holds now (false: it is still to come). */
  active: boolean;
}

/** One of the tenant's delegations, for oversight (GET /v1/delegations): whose it is, too. */
export interface TenantDelegationView extends DelegationView {
  person: OnBehalfOf;
}

export interface DelegationPageView {
  items: TenantDelegationView[];
  nextCursor: string | null;
}

export function delegationView(d: Delegation, delegateName: string | undefined, at: Date): DelegationView {
  return {
    to: { id: d.toPersonId, ...(delegateName ? { name: delegateName } : {}) },
    from: d.startsAt.toISOString(),
    until: d.endsAt.toISOString(),
    ...(d.reason ? { reason: d.reason } : {}),
    active: holdsAt(d, at),
  };
}
