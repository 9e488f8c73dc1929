import { ListApprovalsQuery } from '../../application/queries/list/list.queries';
import { TOOL_CALL_STATUSES } from '../../domain/conversation/tool-call-status';
import { isAgent, type Principal } from '../../domain/shared/actor';
import { ForbiddenError } from './errors';
import { enumParam, listParams } from './request-params';

/** GET /v1/approvals, Tollgate.ListApprovals: people only (403 for an agent), then the parameters (400). */
export function listApprovals(
  p: Principal,
  params: { status?: unknown; cursor?: unknown; limit?: unknown },
): ListApprovalsQuery {
  if (isAgent(p)) throw new ForbiddenError('The approvals inbox is for people; agent tokens cannot decide');
  const status = enumParam('status', params.status, TOOL_CALL_STATUSES) ?? 'pending';
  return new ListApprovalsQuery(p, { ...listParams(params), status });
}
