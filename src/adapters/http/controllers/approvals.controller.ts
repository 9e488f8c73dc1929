import { Controller, Get, Query } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { ListApprovalsQuery } from '../../../application/queries/list/list.queries';
import { TOOL_CALL_STATUSES } from '../../../domain/conversation/tool-call-status';
import { Principal, isAgent } from '../../../domain/shared/actor';
import { CurrentPrincipal, ForbiddenError } from '../auth';
import { enumParam, listParams } from '../request-params';

@ApiTags('approvals')
@ApiBearerAuth()
@Controller('v1/approvals')
export class ApprovalsController {
  constructor(private readonly queries: QueryBus) {}

  /** The calls the caller may decide, oldest first. People only: agents never decide. */
  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    if (isAgent(p)) throw new ForbiddenError('The approvals inbox is for people; agent tokens cannot decide');
    const status = enumParam('status', query.status, TOOL_CALL_STATUSES) ?? 'pending';
    return this.queries.execute(new ListApprovalsQuery(p, { ...listParams(query), status }));
  }
}
