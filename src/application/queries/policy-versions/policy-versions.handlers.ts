import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { PolicyVersionNotFoundError } from '../../../domain/policy/tenant-policy.errors';
import { ValidationError } from '../../../domain/shared/domain-error';
import { POLICY_HISTORY, PolicyHistory } from '../../ports/policy-history.port';
import { Page } from '../../views/views';
import {
  GetPolicyVersionQuery,
  ListPolicyVersionsQuery,
  policyVersionView,
  PolicyVersionSummaryView,
} from './policy-versions.queries';

export { policyVersionView, type PolicyVersionSummaryView } from './policy-versions.queries';

@QueryHandler(ListPolicyVersionsQuery)
export class ListPolicyVersionsHandler implements IQueryHandler<ListPolicyVersionsQuery> {
  constructor(@Inject(POLICY_HISTORY) private readonly history: PolicyHistory) {}

  async execute({ tenantId, page }: ListPolicyVersionsQuery): Promise<Page<PolicyVersionSummaryView>> {
    const before = page.cursor === undefined ? undefined : decodeVersionCursor(page.cursor);
    const rows = await this.history.list(tenantId, { before, limit: page.limit + 1 });
    const items = rows.slice(0, page.limit).map((r) => ({
      version: r.version,
      createdAt: r.createdAt.toISOString(),
      createdBy: r.createdBy,
      rules: r.rules,
    }));
    return {
      items,
      nextCursor: rows.length > page.limit ? encodeVersionCursor(items[items.length - 1].version) : null,
    };
  }
}

@QueryHandler(GetPolicyVersionQuery)
export class GetPolicyVersionHandler implements IQueryHandler<GetPolicyVersionQuery> {
  constructor(@Inject(POLICY_HISTORY) private readonly history: PolicyHistory) {}

  async execute({ tenantId, version }: GetPolicyVersionQuery) {
    const found = await this.history.get(tenantId, version);
    if (!found) throw new PolicyVersionNotFoundError(version);
    return policyVersionView(found);
  }
}

/** Opaque to clients: the last version of the page. */
function encodeVersionCursor(version: number): string {
  return Buffer.from(`v:${version}`).toString('base64url');
}

function decodeVersionCursor(cursor: string): number {
  const m = /^v:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw new ValidationError([{ path: 'cursor', message: 'is not a cursor this server issued' }]);
  return Number(m[1]);
}
