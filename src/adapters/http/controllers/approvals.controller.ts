import { Controller, Get, Query } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { TOOL_CALL_STATUSES } from '../../../domain/conversation/tool-call-status';
import { Principal } from '../../../domain/shared/actor';
import { listApprovals } from '../../api/list-approvals.request';
import { CurrentPrincipal } from '../auth';
import { ApiListQuery } from '../../api/dto/api-params';
import { ApiProblems, BEARER_PROBLEMS } from '../../api/dto/problem.dto';
import { ApprovalPageView } from '../../api/dto/views.dto';

@ApiTags('approvals')
@ApiBearerAuth()
@Controller('v1/approvals')
export class ApprovalsController {
  constructor(private readonly queries: QueryBus) {}

  /** The calls the caller may decide, oldest first. People only: agents never decide. */
  @Get()
  @ApiOperation({
    operationId: 'listApprovals',
    summary: 'List the calls the caller may decide',
    description:
      'People only (no agent token): the calls held for a person that the caller may decide, by role or as the end user, oldest first, each with its conversation.',
  })
  @ApiQuery({
    name: 'status',
    required: false,
    enum: TOOL_CALL_STATUSES,
    enumName: 'ToolCallStatus',
    description: 'pending (default), or the held calls that reached another status',
  })
  @ApiListQuery()
  @ApiOkResponse({ type: ApprovalPageView })
  @ApiProblems(...BEARER_PROBLEMS, 'validation_failed', 'forbidden')
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    return this.queries.execute(listApprovals(p, query));
  }
}
