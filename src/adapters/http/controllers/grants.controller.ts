import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Query } from '@nestjs/common';
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
import { RevokeGrantCommand } from '../../../application/commands/revoke-grant/revoke-grant.command';
import { ListGrantsQuery } from '../../../application/queries/list-grants/list-grants.query';
import { GRANT_EFFECTS, GRANT_SCOPES, GRANT_STATUSES } from '../../../domain/grant/grant.aggregate';
import { Principal } from '../../../domain/shared/actor';
import { ValidationError } from '../../../domain/shared/domain-error';
import { CurrentPrincipal, Roles } from '../auth';
import { ApiChannelHeader, ApiIdParam, ApiListQuery } from '../../api/dto/api-params';
import { GrantPageView, GrantView, RevokeGrantRequest } from '../../api/dto/grant.dto';
import { ApiProblems, BEARER_PROBLEMS, BODY_PROBLEMS, ProblemView } from '../../api/dto/problem.dto';
import { PROBLEM_CONTENT_TYPE, problem } from '../../api/problem';
import { channelHeader, enumParam, listParams } from '../../api/request-params';
import { parseBody } from '../../api/validation';

const STATUS_FILTERS = [...GRANT_STATUSES, 'all'] as const;

@ApiTags('grants')
@ApiBearerAuth()
@Controller('v1/grants')
export class GrantsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get()
  @Roles('approver', 'admin', 'auditor')
  @ApiOperation({
    operationId: 'listGrants',
    summary: "List the tenant's standing grants",
    description:
      'Approvers, admins and auditors: the people who decide or audit. Agents and end users without a role may not (403). Newest first; by default the grants that apply now (status active).',
  })
  @ApiListQuery()
  @ApiQuery({ name: 'tool', required: false, type: 'string', description: "Only this tool's grants" })
  @ApiQuery({
    name: 'scope',
    required: false,
    schema: { type: 'string', enum: [...GRANT_SCOPES] },
    description: 'Only grants of this scope',
  })
  @ApiQuery({
    name: 'status',
    required: false,
    schema: { type: 'string', enum: [...STATUS_FILTERS], default: 'active' },
    description: 'active (the default), revoked, expired, spent (a limited grant with no use left) or all',
  })
  @ApiQuery({
    name: 'effect',
    required: false,
    schema: { type: 'string', enum: [...GRANT_EFFECTS] },
    description: 'deny: standing denies only (made by always_reject); allow: grants only; absent: both',
  })
  @ApiOkResponse({ type: GrantPageView })
  @ApiProblems(...BEARER_PROBLEMS, 'validation_failed', 'forbidden')
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    const { cursor, limit } = listParams(query);
    const scope = enumParam('scope', query.scope, GRANT_SCOPES);
    const status = enumParam('status', query.status, STATUS_FILTERS) ?? 'active';
    if (query.tool !== undefined && (typeof query.tool !== 'string' || query.tool === ''))
      throw new ValidationError([{ path: 'tool', message: 'must be given once, as a tool name' }]);
    const toolName = query.tool as string | undefined;
    const effect = enumParam('effect', query.effect, GRANT_EFFECTS);
    return this.queries.execute(
      new ListGrantsQuery(p, { cursor, limit, scope, status, toolName, ...(effect ? { effect } : {}) }),
    );
  }

  @Delete(':id')
  @HttpCode(200)
  @Roles('approver', 'admin')
  @ApiOperation({
    operationId: 'revokeGrant',
    summary: 'Revoke a standing grant',
    description:
      "Admins may revoke any grant; approvers a conversation grant (the kind they may make). A standing deny (`effect: deny`) only its maker (in its conversation) or an admin may revoke, since revoking it loosens; under `governance: {quorum}` a tenant-wide deny is not lifted by one admin (409 deny_revoke_governed). It stops applying at once: the next proposal, on any instance, is weighed without it. Recorded in the audit trail as GrantRevoked, with who, the channel and the reason (in the body or `?reason=`). Revoking a revoked grant answers it as it stands and records nothing. Another tenant's grant is not found.",
  })
  @ApiIdParam('id', "The grant's id", 'grant_0f3a')
  @ApiQuery({ name: 'reason', required: false, type: 'string', description: 'Why; the same as `reason` in the body' })
  @ApiChannelHeader()
  @ApiBody({
    type: RevokeGrantRequest,
    required: false,
    examples: { reason: { summary: 'With a reason', value: { reason: 'made by mistake: far too wide' } } },
  })
  @ApiOkResponse({ type: GrantView, description: 'The grant, revoked' })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden', 'not_found')
  @ApiResponse({
    status: 409,
    description: 'Governance is on: one admin may not lift a tenant-wide standing deny (deny_revoke_governed)',
    content: {
      [PROBLEM_CONTENT_TYPE]: {
        schema: { $ref: getSchemaPath(ProblemView) },
        examples: {
          deny_revoke_governed: {
            summary: 'A tenant-wide deny under governance',
            value: problem(
              409,
              'deny_revoke_governed',
              'Governance (quorum 2) is on: one admin may not lift the tenant-wide standing deny grant_0f3a. Propose a policy change that turns governance off (another admin approves it as a pending change), revoke the deny, then propose governance again',
            ),
          },
        },
      },
    },
  })
  revoke(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Query('reason') queryReason: unknown,
    @Body() body: unknown,
    @Headers('x-tollgate-channel') channel?: string,
  ) {
    const dto =
      body === undefined || (typeof body === 'object' && body !== null && Object.keys(body).length === 0)
        ? {}
        : parseBody(RevokeGrantRequest, body);
    if (
      queryReason !== undefined &&
      (typeof queryReason !== 'string' || queryReason.length > 1000 || queryReason.includes('\u0000'))
    ) {
      throw new ValidationError([
        { path: 'reason', message: 'must be given once, at most 1000 characters, without NUL' },
      ]);
    }
    if (queryReason !== undefined && dto.reason !== undefined && queryReason !== dto.reason)
      throw new ValidationError([{ path: 'reason', message: 'give it in the body or the query, not both' }]);
    const reason = (dto.reason ?? (queryReason as string | undefined)) || undefined;
    return this.commands.execute(new RevokeGrantCommand(p, id, reason, channelHeader(channel)));
  }
}
