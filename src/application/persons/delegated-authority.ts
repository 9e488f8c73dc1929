import { Inject, Injectable } from '@nestjs/common';
import { delegatedAuthorities, MAX_DELEGATORS } from '../../domain/person/delegation';
import { isAgent, type Principal } from '../../domain/shared/actor';
import { DELEGATIONS, DelegationRepository, PERSON_MAX_AGE_SECONDS } from '../ports/delegation.port';

/**
 * Whose rights a person may decide with besides their own: the people whose delegation to them holds at `at`,
 * as their records last showed them and only while those are recent (domain/person/delegation.ts). Asked by
 * every use case that decides, reads or lists calls for a person, so one answer holds on every way in.
 */
@Injectable()
export class DelegatedAuthority {
  constructor(
    @Inject(DELEGATIONS) private readonly delegations: DelegationRepository,
    @Inject(PERSON_MAX_AGE_SECONDS) private readonly maxAgeSeconds: number,
  ) {}

  async of(p: Principal, at: Date): Promise<Principal[]> {
    // An agent token decides nothing, so nothing is lent to it.
    if (isAgent(p)) return [];
    const rows = await this.delegations.toPerson(p.tenant, p.id, at, MAX_DELEGATORS);
    return delegatedAuthorities(rows, p.id, at, this.maxAgeSeconds);
  }
}
