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

/** Analyses remembered, by tenant and version: a version never changes, and a large document costs seconds. */
const MEMO_SIZE = 256;

@QueryHandler(AnalysePolicyQuery)
export class AnalysePolicyHandler implements IQueryHandler<AnalysePolicyQuery> {
  private readonly memo = new Map<string, PolicyAnalysis>();

  constructor(@Inject(POLICIES) private readonly policies: PolicyRepository) {}

  async execute({ tenantId }: AnalysePolicyQuery): Promise<PolicyAnalysis> {
    const policy = await this.policies.current(tenantId);
    const key = JSON.stringify([tenantId, policy.policyVersion]);
    let found = this.memo.get(key);
    if (!found) {
      found = { version: policy.policyVersion, findings: analysePolicy(policy.document) };
      if (this.memo.size >= MEMO_SIZE) this.memo.delete(this.memo.keys().next().value!);
      this.memo.set(key, found);
    }
    return found;
  }
}
