import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  ApiBearerAuth,
  ApiBody,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { ApproveChangeCommand, RejectChangeCommand } from '../../../application/commands/changes/change.commands';
import { GetChangeQuery, ListChangesQuery } from '../../../application/queries/changes/changes.queries';
import { CHANGE_STATUSES } from '../../../domain/governance/pending-change.aggregate';
import { Principal } from '../../../domain/shared/actor';
import { CurrentPrincipal, Roles } from '../auth';
import { ApiChannelHeader, ApiIdParam, ApiListQuery } from '../../api/dto/api-params';
import {
  ApproveChangeResultView,
  PendingChangePageView,
  PendingChangeView,
  RejectChangeRequest,
} from '../../api/dto/change.dto';
import { ApiProblems, BEARER_PROBLEMS, BODY_PROBLEMS, ProblemView } from '../../api/dto/problem.dto';
import { PROBLEM_CONTENT_TYPE, problem } from '../../api/problem';
import { channelHeader, enumParam, listParams } from '../../api/request-params';
import { parseBody } from '../../api/validation';

const CONFLICTS = {
  change_not_pending: {
    summary: 'Applied, rejected or expired already',
    value: problem(409, 'change_not_pending', 'Change chg_5b1e is applied: it can no longer be approved or rejected', {
      status: 'applied',
    }),
  },
  already_approved: {
    summary: 'This admin approved it already',
    value: problem(409, 'already_approved', 'You have approved this change already: another admin must approve it'),
  },
  policy_moved_on: {
    summary: 'The policy changed since it was proposed',
    value: problem(
      409,
      'policy_moved_on',
      'This change was made against policy version 3, and version 4 is in force now: propose it again against the current version',
    ),
  },
  halt_moved_on: {
    summary: 'The halt a resume was proposed for was lifted (and maybe pulled again)',
    value: problem(
      409,
      'halt_moved_on',
      'This resume was proposed for the halt pulled at 2026-11-28T09:00:00.000Z; that halt was lifted and the one in force was pulled at 2026-11-28T10:00:00.000Z: propose a resume of it again',
    ),
  },
};

/**
 * Four eyes on the control plane: with `governance: {quorum}` in the policy, an admin's policy change, rollback,
 * resume, new webhook or tenant-wide grant waits here for other admins. Admins list, approve and reject; auditors
 * may read. Every query names the caller's tenant: another tenant's change is not found.
 */
@ApiTags('changes')
@ApiBearerAuth()
@Controller('v1/changes')
export class ChangesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get()
  @Roles('admin', 'auditor')
  @ApiOperation({
    operationId: 'listChanges',
    summary: 'List pending changes of the control plane',
    description:
      'Admins and auditors. Newest first; `status` filters (pending, applied, rejected, expired); without it, all of them (pending and recent).',
  })
  @ApiListQuery()
  @ApiQuery({
    name: 'status',
    required: false,
    schema: { type: 'string', enum: [...CHANGE_STATUSES] },
    description: 'Only changes in this status; without it, all',
  })
  @ApiOkResponse({ type: PendingChangePageView })
  @ApiProblems(...BEARER_PROBLEMS, 'validation_failed', 'forbidden')
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    const { cursor, limit } = listParams(query);
    const status = enumParam('status', query.status, CHANGE_STATUSES);
    return this.queries.execute(new ListChangesQuery(p, { cursor, limit, status }));
  }

  @Get(':id')
  @Roles('admin', 'auditor')
  @ApiOperation({ operationId: 'getChange', summary: 'Get a pending change', description: 'Admins and auditors.' })
  @ApiIdParam('id', "The change's id", 'chg_5b1e')
  @ApiOkResponse({ type: PendingChangeView })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden', 'not_found')
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.queries.execute(new GetChangeQuery(p, id));
  }

  @Post(':id/approve')
  @HttpCode(200)
  @Roles('admin')
  @ApiOperation({
    operationId: 'approveChange',
    summary: 'Approve a pending change',
    description:
      "Admins other than its proposer (403 self_approval) and than those who approved already (409 already_approved). When the distinct admins reach `needed` (the proposer counts as one), the change is applied once, as the original request would have been, in the proposer's name, and recorded as ChangeApplied naming the proposer and the approvers. A policy change whose version is no longer in force is closed instead (409 policy_moved_on); so is a resume whose halt was lifted since it was proposed, even when a new halt of the same scope stands (409 halt_moved_on: the newer halt is not lifted).",
  })
  @ApiIdParam('id', "The change's id", 'chg_5b1e')
  @ApiChannelHeader()
  @ApiOkResponse({ type: ApproveChangeResultView })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden', 'not_found')
  @ApiResponse({
    status: 409,
    description: 'The change is no longer pending, this admin approved it already, or the policy or the halt moved on',
    content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: getSchemaPath(ProblemView) }, examples: CONFLICTS } },
  })
  approve(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Headers('x-tollgate-channel') channel?: string) {
    return this.commands.execute(new ApproveChangeCommand(p, id, channelHeader(channel)));
  }

  @Post(':id/reject')
  @HttpCode(200)
  @Roles('admin')
  @ApiOperation({
    operationId: 'rejectChange',
    summary: 'Reject a pending change',
    description: 'Any admin, its proposer too (withdrawing it). It ends; recorded as ChangeRejected with the reason.',
  })
  @ApiIdParam('id', "The change's id", 'chg_5b1e')
  @ApiChannelHeader()
  @ApiBody({ type: RejectChangeRequest, required: false })
  @ApiOkResponse({ type: PendingChangeView })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden', 'not_found')
  @ApiResponse({
    status: 409,
    description: 'The change is no longer pending',
    content: {
      [PROBLEM_CONTENT_TYPE]: {
        schema: { $ref: getSchemaPath(ProblemView) },
        examples: { change_not_pending: CONFLICTS.change_not_pending },
      },
    },
  })
  reject(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('x-tollgate-channel') channel?: string,
  ) {
    const dto =
      body === undefined || body === null || (typeof body === 'object' && Object.keys(body).length === 0)
        ? {}
        : parseBody(RejectChangeRequest, body);
    return this.commands.execute(new RejectChangeCommand(p, id, dto.reason || undefined, channelHeader(channel)));
  }
}
