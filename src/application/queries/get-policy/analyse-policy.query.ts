import { Inject } from '@nestjs/common';
import { IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import { analysePolicy, PolicyFinding } from '../../../domain/policy/policy-analysis';
import { POLICIES, PolicyRepository } from '../../ports';

/** What the tenant's current policy's rules can and cannot do (policy-analysis.ts). */
export interface PolicyAnalysis {
  version: number;
  findings: PolicyFinding[];
}

export class AnalysePolicyQuery extends Query<PolicyAnalysis> {
  constructor(readonly tenantId: string) {
    super();
  }
}

@QueryHandler(AnalysePolicyQuery)
export class AnalysePolicyHandler implements IQueryHandler<AnalysePolicyQuery> {
  constructor(@Inject(POLICIES) private readonly policies: PolicyRepository) {}
  async execute({ tenantId }: AnalysePolicyQuery): Promise<PolicyAnalysis> {
    const policy = await this.policies.current(tenantId);
    return { version: policy.policyVersion, findings: analysePolicy(policy.document) };
  }
}
