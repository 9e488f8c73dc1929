import { Body, Controller, Get, Headers, HttpCode, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { HeldForApprovalView } from '../../api/dto/change.dto';
import { held } from './policy.controller';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { HaltCommand, ResumeCommand } from '../../../application/commands/halt/halt.command';
import { GetStatusQuery } from '../../../application/queries/get-status/get-status.query';
import { haltTarget } from '../../../domain/halt/halt.aggregate';
import { Principal } from '../../../domain/shared/actor';
import { CurrentPrincipal, Roles } from '../auth';
import { ApiChannelHeader } from '../../api/dto/api-params';
import { HaltRequest, ResumeRequest } from '../../api/dto/halt.dto';
import { ApiProblems, BEARER_PROBLEMS, BODY_PROBLEMS } from '../../api/dto/problem.dto';
import { HaltResultView, ResumeResultView, StatusView } from '../../api/dto/views.dto';
import { channelHeader } from '../../api/request-params';
import { parseBody } from '../../api/validation';

@ApiTags('halt')
@ApiBearerAuth()
@Controller('v1')
export class HaltController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Post('halt')
  @HttpCode(200)
  @Roles('admin')
  @ApiOperation({
    operationId: 'halt',
    summary: 'Halt the tenant, an agent or a conversation',
    description:
      'Admins. Pending and approved-but-unclaimed calls in scope are cancelled; new proposals and claims in scope answer 503 halted until resumed. Halting what is halted changes nothing (changed: false).',
  })
  @ApiChannelHeader()
  @ApiBody({
    type: HaltRequest,
    examples: {
      tenant: { summary: 'The whole tenant', value: { scope: 'tenant', reason: 'incident drill' } },
      agent: { summary: 'One agent', value: { scope: 'agent', id: 'support-bot', reason: 'looping' } },
    },
  })
  @ApiOkResponse({ type: HaltResultView })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden', 'not_found')
  halt(@CurrentPrincipal() p: Principal, @Body() body: unknown, @Headers('x-tollgate-channel') channel?: string) {
    const dto = parseBody(HaltRequest, body);
    return this.commands.execute(new HaltCommand(p, haltTarget(dto.scope, dto.id), dto.reason, channelHeader(channel)));
  }

  @Post('resume')
  @HttpCode(200)
  @Roles('admin')
  @ApiOperation({
    operationId: 'resume',
    summary: 'Lift a halt',
    description:
      'Admins; the same scope and id as the halt. Resuming what is not halted changes nothing (changed: false).',
  })
  @ApiChannelHeader()
  @ApiBody({ type: ResumeRequest, examples: { tenant: { summary: 'The whole tenant', value: { scope: 'tenant' } } } })
  @ApiOkResponse({ type: ResumeResultView })
  @ApiResponse({
    status: 202,
    type: HeldForApprovalView,
    description:
      'Governance (`governance: {quorum}` in the policy in force): held for other admins as a pending change (/v1/changes); the halt stands meanwhile',
  })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden')
  async resume(
    @CurrentPrincipal() p: Principal,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: FastifyReply,
    @Headers('x-tollgate-channel') channel?: string,
  ) {
    const dto = parseBody(ResumeRequest, body);
    const { pendingChange, ...result } = await this.commands.execute(
      new ResumeCommand(p, haltTarget(dto.scope, dto.id), dto.reason, channelHeader(channel)),
    );
    if (pendingChange) return held(res, { pendingChange });
    return result;
  }

  @Get('status')
  @Roles('admin', 'approver', 'auditor')
  @ApiOperation({
    operationId: 'getStatus',
    summary: 'The halts in force',
    description: 'Admins, approvers and auditors. `halted` means the whole tenant.',
  })
  @ApiOkResponse({ type: StatusView })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden')
  status(@CurrentPrincipal() p: Principal) {
    return this.queries.execute(new GetStatusQuery(p.tenant));
  }
}
