import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { DecideStepCommand } from '../../../application/commands/decide-step/decide-step.command';
import { ConversationAccessQuery } from '../../../application/queries/access/access.query';
import { ListConversationsQuery } from '../../../application/queries/list/list.queries';
import { Principal } from '../../../domain/shared/actor';
import { getConversation, MAX_EXTERNAL_IDS } from '../../api/get-conversation.request';
import { proposeToolCalls } from '../../api/propose-tool-calls.request';
import { startConversation } from '../../api/start-conversation.request';
import { CurrentPrincipal, Roles } from '../auth';
import { StartConversationRequest } from '../../api/dto/conversation.dto';
import { ApiChannelHeader, ApiIdParam, ApiListQuery } from '../../api/dto/api-params';
import { ApiProblems, BEARER_PROBLEMS, BODY_PROBLEMS } from '../../api/dto/problem.dto';
import { ProposeToolCallsRequest, StepDecisionRequest } from '../../api/dto/tool-call.dto';
import { ConversationPageView, ConversationView, ProposalView, StepDecisionView } from '../../api/dto/views.dto';
import { channelHeader, enumParam, ID_PATTERN, listParams } from '../../api/request-params';
import { parseBody } from '../../api/validation';
import { ForbiddenError } from '../../api/errors';

@ApiTags('conversations')
@ApiBearerAuth()
@Controller('v1/conversations')
export class ConversationsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Post()
  @Roles('agent')
  @ApiOperation({
    operationId: 'startConversation',
    summary: 'Start a conversation',
    description:
      'Agents. Every field is optional; the server makes an id when none is given. The same id again from the same agent answers 200 with the conversation as it is; from another agent, 409 idempotency_mismatch.',
  })
  @ApiBody({
    type: StartConversationRequest,
    required: false,
    examples: {
      withUser: {
        summary: 'For an end user',
        value: { id: 'conv-1', user: { id: 'ann', roles: ['admin'], name: 'Ann' }, title: 'Tidy the knowledge base' },
      },
    },
  })
  @ApiCreatedResponse({ type: ConversationView, description: 'Started' })
  @ApiOkResponse({ type: ConversationView, description: 'It existed (the same id from the same agent)' })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden', 'idempotency_mismatch')
  async start(@CurrentPrincipal() p: Principal, @Body() body: unknown, @Res({ passthrough: true }) res: FastifyReply) {
    const { conversation, created } = await this.commands.execute(startConversation(p, body));
    res.status(created ? 201 : 200);
    return conversation;
  }

  @Get()
  @ApiOperation({
    operationId: 'listConversations',
    summary: 'List conversations',
    description:
      "Oldest first, without their calls. Agents see their own; approvers, admins and auditors the tenant's; anyone else those where they are the end user.",
  })
  @ApiQuery({
    name: 'status',
    required: false,
    enum: ['active', 'blocked', 'halted'],
    enumName: 'ConversationStatus',
    description: 'Only the conversations in this status',
  })
  @ApiListQuery()
  @ApiOkResponse({ type: ConversationPageView })
  @ApiProblems(...BEARER_PROBLEMS, 'validation_failed')
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    const status = enumParam('status', query.status, ['active', 'blocked', 'halted'] as const);
    return this.queries.execute(new ListConversationsQuery(p, { ...listParams(query), status }));
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getConversation',
    summary: 'Get a conversation with all its calls, or those named by external id',
    description:
      "Its agent, its end user, and the tenant's approvers, admins and auditors; anyone else gets 404. With `externalId`, `toolCalls` holds only the calls of those external ids (an id no call has is simply not there), each looked up on its own: the read costs the same however many calls the conversation holds.",
  })
  @ApiIdParam('id', "The conversation's id", 'conv-1')
  @ApiQuery({
    name: 'externalId',
    required: false,
    isArray: true,
    style: 'form',
    explode: true,
    schema: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_EXTERNAL_IDS,
      items: { type: 'string', pattern: ID_PATTERN.source },
    },
    description: `Only the calls with this external id (the framework's own call id); repeat it for more, 1 to ${MAX_EXTERNAL_IDS} times`,
  })
  @ApiOkResponse({ type: ConversationView })
  @ApiProblems(...BEARER_PROBLEMS, 'not_found', 'validation_failed')
  async get(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query('externalId') externalId?: unknown) {
    return this.queries.execute(await getConversation(this.queries, p, id, externalId));
  }

  @Post(':id/tool-calls')
  @ApiOperation({
    operationId: 'proposeToolCalls',
    summary: 'Propose a step of tool calls',
    description:
      "The conversation's agent; 1 to 64 calls, judged together by the policy: each comes back approved, rejected or pending. A step whose calls all repeat earlier ones (same ids, same content) answers 200 with them, even while the conversation is blocked or halted.",
  })
  @ApiIdParam('id', "The conversation's id", 'conv-1')
  @ApiBody({
    type: ProposeToolCallsRequest,
    examples: {
      step: {
        summary: 'A read and a destructive call',
        value: {
          toolCalls: [
            { id: 'call_1', toolName: 'get_source', arguments: { id: 'src_2' } },
            {
              id: 'call_2',
              toolName: 'delete_source',
              arguments: { id: 'src_2' },
              reason: 'the user asked to delete it',
              confidence: 0.9,
              display: {
                title: 'Delete source',
                summary: 'Delete Handbook (src_2): 1,204 objects.',
                fields: [{ label: 'Objects', value: '1,204' }],
              },
            },
          ],
        },
      },
    },
  })
  @ApiCreatedResponse({ type: ProposalView, description: 'Proposed' })
  @ApiOkResponse({ type: ProposalView, description: 'Every call repeats an earlier one: those calls, as they stand' })
  @ApiProblems(
    ...BEARER_PROBLEMS,
    ...BODY_PROBLEMS,
    'forbidden',
    'not_found',
    'conversation_blocked',
    'idempotency_mismatch',
    'halted',
  )
  async propose(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: FastifyReply,
  ) {
    const command = await proposeToolCalls(this.queries, p, id, () => body);
    const { replay, ...answer } = await this.commands.execute(command);
    res.status(replay ? 200 : 201);
    return answer;
  }

  @Post(':id/decisions')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'decideStep',
    summary: "Approve or reject every pending call of the conversation's step at once",
    description:
      "People only. Each pending call (or each named in toolCallIds) is decided on its own, with its own event and its own checks: one the caller may not decide (roles, separation of duties, a quorum's roles) or that is no longer pending is listed in `refused` with the code deciding it alone would answer, and left as it was.",
  })
  @ApiIdParam('id', "The conversation's id", 'conv-1')
  @ApiChannelHeader()
  @ApiBody({
    type: StepDecisionRequest,
    examples: { all: { summary: 'Reject the whole step', value: { decision: 'reject', reason: 'wrong customer' } } },
  })
  @ApiOkResponse({ type: StepDecisionView })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden', 'not_found')
  async decideStep(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('x-tollgate-channel') channel?: string,
  ) {
    // 404 (not visible), then 403 (an agent), then 400 (the body), as on every route.
    const access = await this.queries.execute(new ConversationAccessQuery(p, id));
    if (access.isAgent) throw new ForbiddenError('Agent tokens cannot decide tool calls: approval comes from people');
    const dto = parseBody(StepDecisionRequest, body);
    return this.commands.execute(
      new DecideStepCommand(
        { ...p, via: channelHeader(channel) },
        id,
        { decision: dto.decision, reason: dto.reason },
        dto.toolCallIds,
      ),
    );
  }
}
