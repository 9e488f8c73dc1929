import { Query } from '@nestjs/cqrs';
import type { PolicyVersionRecord } from '../../ports/policy-history.port';
import type { Page } from '../../views/views';

export interface PolicyVersionSummaryView {
  version: number;
  createdAt: string;
  createdBy: string;
  rules: number;
}

export function policyVersionView(v: PolicyVersionRecord) {
  const doc = v.document.toJSON();
  return {
    version: v.version,
    defaults: doc.defaults,
    rules: doc.rules,
    createdAt: v.createdAt.toISOString(),
    createdBy: v.createdBy,
  };
}

export class ListPolicyVersionsQuery extends Query<Page<PolicyVersionSummaryView>> {
  constructor(
    readonly tenantId: string,
    readonly page: { cursor?: string; limit: number },
  ) {
    super();
  }
}

export class GetPolicyVersionQuery extends Query<ReturnType<typeof policyVersionView>> {
  constructor(
    readonly tenantId: string,
    readonly version: number,
  ) {
    super();
  }
}
