import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { POLICIES, PolicyRepository } from '../../ports';
import { policyView } from '../../views/views';
import { GetPolicyQuery } from './get-policy.query';

@QueryHandler(GetPolicyQuery)
export class GetPolicyHandler implements IQueryHandler<GetPolicyQuery> {
  constructor(@Inject(POLICIES) private readonly policies: PolicyRepository) {}
  async execute({ tenantId }: GetPolicyQuery) {
    return policyView(await this.policies.current(tenantId));
  }
}
