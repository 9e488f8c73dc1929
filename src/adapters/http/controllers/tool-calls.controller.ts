import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ClaimExecutionCommand } from '../../../application/commands/claim-execution/claim-execution.command';
import { ExtendDeadlineCommand } from '../../../application/commands/extend-deadline/extend-deadline.command';
import { Access } from '../../../application/queries/access/access.query';
import { GetToolCallQuery } from '../../../application/queries/get-tool-call/get-tool-call.query';
import { hasAnyRole, Principal } from '../../../domain/shared/actor';
import { ValidationError } from '../../../domain/shared/domain-error';
import { decideToolCall } from '../../api/decide-tool-call.request';
import { WaitSlots } from '../../api/limits';
import { readOrWait } from '../../api/long-poll';
import { accessBeforeFaults, toolCallAccess } from '../../api/precedence';
import { reportResult } from '../../api/report-result.request';
import { channelHeader } from '../../api/request-params';
import { parseBody } from '../../api/validation';
import { CurrentPrincipal } from '../auth';
import { ApiChannelHeader, ApiIdParam, ApiWaitQuery } from '../../api/dto/api-params';
import { ApiProblems, BEARER_PROBLEMS, BODY_PROBLEMS } from '../../api/dto/problem.dto';
import { DeadlineRequest, DecisionRequest, ResultRequest } from '../../api/dto/tool-call.dto';
import { ExecutionClaimView, ToolCallView } from '../../api/dto/views.dto';
import { StepUpOptionsView, StepUpRequest } from '../../api/dto/passkey.dto';
import { ForbiddenError } from '../../api/errors';
import { RequestStepUpCommand } from '../../../application/commands/request-step-up/request-step-up.command';

/** Checks run in the contract's order: 401 (guard) → 404 → 403 → 400 → 409/503 (adapters/api/precedence.ts). */
@ApiTags('tool calls')
@ApiBearerAuth()
@Controller('v1/tool-calls')
export class ToolCallsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly waitSlots: WaitSlots,
  ) {}

  @Get(':id')
  @ApiOperation({
    operationId: 'getToolCall',
    summary: 'Get a tool call, or wait for its decision',
    description:
      "The conversation's agent and end user, and the tenant's approvers, admins and auditors. With wait=N, a pending call is answered as soon as it leaves pending (decided on any instance) or after N seconds, still pending. Open waits are bounded per token and per tenant (429).",
  })
  @ApiIdParam('id', "The tool call's id", 'tc_7de0c1')
  @ApiWaitQuery('the call')
  @ApiOkResponse({ type: ToolCallView })
  @ApiProblems(...BEARER_PROBLEMS, 'waits_limited', 'validation_failed', 'not_found')
  async get(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Query('wait') wait: unknown,
    @Res({ passthrough: true }) res: FastifyReply,
  ) {
    // The query checks visibility itself: no separate access read on the hot path of every long-poll.
    return readOrWait(
      { raw: wait, access: toolCallAccess(this.queries, p, id), slots: this.waitSlots, principal: p, res: res.raw },
      (seconds, signal) => this.queries.execute(new GetToolCallQuery(p, id, seconds, signal)),
    );
  }

  @Post(':id/decision')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'decideToolCall',
    summary: 'Approve, reject or always allow a held call',
    description:
      "People only (an agent token is refused): a caller whose roles are among the call's approvers, or its end user when `requester` is. The first decision wins: a call no longer pending answers 409 already_decided with the standing decision; the same request again by the same person answers 200, unchanged. A call whose rule says `stepUp: passkey` is approved only with `stepUp.passkey`: an assertion answering POST /v1/tool-calls/{id}/step-up for the same arguments (a rejection needs none).",
  })
  @ApiIdParam('id', "The tool call's id", 'tc_7de0c1')
  @ApiChannelHeader()
  @ApiBody({
    type: DecisionRequest,
    examples: {
      approve: {
        summary: 'Approve with edited arguments',
        value: { decision: 'approve', reason: 'confirmed with the owner', arguments: { id: 'src_2', dryRun: true } },
      },
      reject: { summary: 'Reject with a reason for the agent', value: { decision: 'reject', reason: 'not today' } },
      alwaysAllow: {
        summary: 'Approve and allow the tool from now on in this conversation',
        value: { decision: 'always_allow', scope: 'conversation' },
      },
      respond: {
        summary: 'Answer the agent instead of running the tool',
        value: { decision: 'respond', response: 'Use the staging bucket instead; production is frozen this week.' },
      },
      alwaysReject: {
        summary: 'Reject, and deny this tool from now on in this conversation',
        value: { decision: 'always_reject', scope: 'conversation', reason: 'not in this conversation' },
      },
      singleUse: {
        summary: 'Approve, and let one more such call through without asking',
        value: { decision: 'always_allow', scope: 'conversation', uses: 1 },
      },
      alwaysAllowNarrow: {
        summary: 'Always allow `ls` commands in this conversation, for one day',
        value: { decision: 'always_allow', scope: 'conversation', args: { cmd: 'ls *' }, expiresIn: 86400 },
      },
    },
  })
  @ApiOkResponse({ type: ToolCallView, description: 'The call as it now stands' })
  @ApiProblems(
    ...BEARER_PROBLEMS,
    ...BODY_PROBLEMS,
    'forbidden',
    'grant_forbidden',
    'decision_not_allowed',
    'step_up_required',
    'step_up_mismatch',
    'not_found',
    'already_decided',
  )
  async decide(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('x-tollgate-channel') channel?: string,
  ) {
    const command = await decideToolCall(this.queries, p, id, () => ({ body, via: () => channelHeader(channel) }));
    return this.commands.execute(command);
  }

  @Post(':id/step-up')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'requestStepUp',
    summary: 'Get the passkey challenge an approval of this call needs',
    description:
      "For a call whose rule says `stepUp: passkey`: the options for navigator.credentials.get() (@simplewebauthn/browser startAuthentication), with a challenge derived from the call and the arguments the approval will carry (`arguments`: the edited ones; absent, the call's own, or a quorum's fixed ones), answering once within 5 minutes. Send the assertion as the decision's `stepUp.passkey`. The decision's 404 and 403; a call no longer pending 409 already_decided; a call whose rule asks no passkey 409 step_up_not_required; a person with no passkey 409 no_passkey.",
  })
  @ApiIdParam('id', "The tool call's id", 'tc_7de0c1')
  @ApiBody({
    type: StepUpRequest,
    required: false,
    examples: {
      own: { summary: "Approve the call's own arguments", value: {} },
      edited: { summary: 'Approve edited arguments', value: { arguments: { id: 'src_2', dryRun: true } } },
    },
  })
  @ApiOkResponse({ type: StepUpOptionsView })
  @ApiProblems(
    ...BEARER_PROBLEMS,
    ...BODY_PROBLEMS,
    'forbidden',
    'not_found',
    'already_decided',
    'step_up_not_required',
    'no_passkey',
  )
  async stepUp(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    // 404 and 403 first, as for the decision; the command checks both again with the call in hand.
    const a = await toolCallAccess(this.queries, p, id)();
    if (!a.mayDecide)
      throw new ForbiddenError(
        a.isAgent
          ? 'Agent tokens cannot decide tool calls: approval comes from people'
          : 'Your roles may not decide this tool call',
      );
    const dto = parseBody(StepUpRequest, body ?? {});
    return this.commands.execute(new RequestStepUpCommand(p, id, dto.arguments));
  }

  @Post(':id/deadline')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'extendDeadline',
    summary: 'Give a held call more time',
    description:
      'Admins. `expiresAt` (later than the current deadline, at most 30 days from now) or `extendBy` seconds; recorded as ToolCallDeadlineExtended, and the reminders start over for the new deadline. A call no longer pending answers 409 already_decided.',
  })
  @ApiIdParam('id', "The tool call's id", 'tc_7de0c1')
  @ApiChannelHeader()
  @ApiBody({
    type: DeadlineRequest,
    examples: { hour: { summary: 'One more hour', value: { extendBy: 3600, reason: 'the owner is in a meeting' } } },
  })
  @ApiOkResponse({ type: ToolCallView, description: 'The call with its new deadline' })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden', 'not_found', 'already_decided')
  async extendDeadline(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('x-tollgate-channel') channel?: string,
  ) {
    const admin = (a: Access) => !a.isAgent && hasAnyRole(p, ['admin']);
    const { dto, via } = await accessBeforeFaults(
      () => {
        const dto = parseBody(DeadlineRequest, body);
        if ((dto.expiresAt === undefined) === (dto.extendBy === undefined))
          throw new ValidationError([{ path: '', message: 'give exactly one of expiresAt and extendBy' }]);
        return { dto, via: channelHeader(channel) };
      },
      toolCallAccess(this.queries, p, id),
      admin,
      () => 'Only an admin may extend the deadline of a tool call',
    );
    return this.commands.execute(
      new ExtendDeadlineCommand({ ...p, via }, id, {
        expiresAt: dto.expiresAt ? new Date(dto.expiresAt) : undefined,
        extendBySeconds: dto.extendBy,
        reason: dto.reason,
      }),
    );
  }

  @Post(':id/execution')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'claimExecution',
    summary: 'Claim the run of an approved call',
    description:
      "The conversation's agent, no body: approved becomes executed, exactly once. Answers the arguments to run (edited or not) and a signed receipt for the tool's backend.",
  })
  @ApiIdParam('id', "The tool call's id", 'tc_7de0c1')
  @ApiOkResponse({ type: ExecutionClaimView })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden', 'not_found', 'not_approved', 'already_executed', 'halted')
  claim(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    // No body to check: the command's own 404 and 403 are the only checks, in its transaction.
    return this.commands.execute(new ClaimExecutionCommand(p, id));
  }

  @Post(':id/result')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'reportResult',
    summary: 'Report the result of a claimed call',
    description:
      "The conversation's agent, after the claim; output at most 64 KiB serialised. Accepted during a halt: the run happened and must be recorded.",
  })
  @ApiIdParam('id', "The tool call's id", 'tc_7de0c1')
  @ApiBody({
    type: ResultRequest,
    examples: { succeeded: { summary: 'It ran', value: { outcome: 'succeeded', output: { deleted: 1204 } } } },
  })
  @ApiOkResponse({ type: ToolCallView, description: 'The call, now completed' })
  @ApiProblems(
    ...BEARER_PROBLEMS,
    ...BODY_PROBLEMS,
    'output_too_large',
    'forbidden',
    'not_found',
    'not_executed',
    'already_completed',
  )
  async result(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    return this.commands.execute(await reportResult(this.queries, p, id, () => body));
  }
}
