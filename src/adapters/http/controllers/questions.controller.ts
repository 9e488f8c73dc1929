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
import { GetQuestionQuery, ListQuestionsQuery } from '../../../application/queries/questions/question.queries';
import { QuestionView as AppQuestionView } from '../../../application/views/question.view';
import { QUESTION_STATUSES } from '../../../domain/question/question.aggregate';
import { Principal, isAgent } from '../../../domain/shared/actor';
import { CurrentPrincipal } from '../auth';
import { ApiChannelHeader, ApiIdParam, ApiListQuery, ApiWaitQuery } from '../../api/dto/api-params';
import { ApiProblems, BEARER_PROBLEMS, BODY_PROBLEMS } from '../../api/dto/problem.dto';
import { AnswerQuestionRequest, AskQuestionRequest, QuestionPageView, QuestionView } from '../../api/dto/question.dto';
import { answerQuestion } from '../../api/answer-question.request';
import { askQuestion } from '../../api/ask-question.request';
import { ForbiddenError } from '../../api/errors';
import { WaitSlots } from '../../api/limits';
import { readOrWait } from '../../api/long-poll';
import { questionAccess } from '../../api/precedence';
import { channelHeader, enumParam, listParams } from '../../api/request-params';

/** Questions from agents to people ("ask a human"). Checks run in the contract's order: 401 → 404 → 403 → 400 → 409/503. */
@ApiTags('questions')
@ApiBearerAuth()
@Controller('v1')
export class QuestionsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly waitSlots: WaitSlots,
  ) {}

  @Post('conversations/:id/questions')
  @ApiOperation({
    operationId: 'askQuestion',
    summary: 'Ask a person a question',
    description:
      "The conversation's agent: a free-text question, or one with 2 to 20 choices. It waits in the inbox of the people `askTo` names until the first answer, its timeout or a halt. A question whose `id` repeats an earlier one with the same content answers 200 with it; with different content, 409 idempotency_mismatch.",
  })
  @ApiIdParam('id', "The conversation's id", 'conv-1')
  @ApiBody({
    type: AskQuestionRequest,
    examples: {
      choices: {
        summary: 'Pick one of two',
        value: {
          id: 'ask_1',
          text: 'Proceed with the EU or the US region?',
          choices: ['EU', 'US'],
          timeoutSeconds: 600,
        },
      },
      freeText: {
        summary: 'Free text, to the end user only',
        value: { text: 'Which account should I bill?', askTo: ['requester'] },
      },
    },
  })
  @ApiCreatedResponse({ type: QuestionView, description: 'Asked' })
  @ApiOkResponse({ type: QuestionView, description: 'The same id and content again: the question as it stands' })
  @ApiProblems(
    ...BEARER_PROBLEMS,
    ...BODY_PROBLEMS,
    'forbidden',
    'not_found',
    'idempotency_mismatch',
    'too_many_open_questions',
    'halted',
  )
  async ask(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: FastifyReply,
  ) {
    const { replay, question } = await this.commands.execute(await askQuestion(this.queries, p, id, () => body));
    res.status(replay ? 200 : 201);
    return question as AppQuestionView;
  }

  @Get('questions')
  @ApiOperation({
    operationId: 'listQuestions',
    summary: 'List the questions the caller may answer',
    description:
      'People only (no agent token): the questions put to the caller, as the end user or by role, newest first.',
  })
  @ApiQuery({
    name: 'status',
    required: false,
    enum: QUESTION_STATUSES,
    enumName: 'QuestionStatus',
    description: 'pending (default), or those that reached another status',
  })
  @ApiListQuery()
  @ApiOkResponse({ type: QuestionPageView })
  @ApiProblems(...BEARER_PROBLEMS, 'validation_failed', 'forbidden')
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    if (isAgent(p)) throw new ForbiddenError('The questions inbox is for people; agent tokens cannot answer');
    const status = enumParam('status', query.status, QUESTION_STATUSES) ?? 'pending';
    return this.queries.execute(new ListQuestionsQuery(p, { ...listParams(query), status }));
  }

  @Get('questions/:id')
  @ApiOperation({
    operationId: 'getQuestion',
    summary: 'Get a question, or wait for its answer',
    description:
      "The conversation's agent and end user, and the tenant's approvers, admins and auditors. With wait=N, a pending question is answered as soon as it leaves pending (on any instance) or after N seconds, still pending. Open waits are bounded per token and per tenant (429).",
  })
  @ApiIdParam('id', "The question's id", 'q_3f9a0c')
  @ApiWaitQuery('the question')
  @ApiOkResponse({ type: QuestionView })
  @ApiProblems(...BEARER_PROBLEMS, 'waits_limited', 'validation_failed', 'not_found')
  async get(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Query('wait') wait: unknown,
    @Res({ passthrough: true }) res: FastifyReply,
  ) {
    return readOrWait(
      { raw: wait, access: questionAccess(this.queries, p, id), slots: this.waitSlots, principal: p, res: res.raw },
      (seconds, signal) => this.queries.execute(new GetQuestionQuery(p, id, seconds, signal)),
    );
  }

  @Post('questions/:id/answer')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'answerQuestion',
    summary: 'Answer a question',
    description:
      'People only (an agent token is refused): the end user when `requester` is asked, or a caller whose roles are among `askTo`. With choices, the answer must be one of them unless free text is allowed. The first answer wins: a question no longer pending answers 409 already_answered; the same answer again by the same person answers 200, unchanged.',
  })
  @ApiIdParam('id', "The question's id", 'q_3f9a0c')
  @ApiChannelHeader()
  @ApiBody({ type: AnswerQuestionRequest, examples: { choice: { summary: 'Pick a choice', value: { answer: 'EU' } } } })
  @ApiOkResponse({ type: QuestionView, description: 'The question, answered' })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden', 'not_found', 'already_answered')
  async answer(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('x-tollgate-channel') channel?: string,
  ) {
    const command = await answerQuestion(this.queries, p, id, () => ({ body, via: () => channelHeader(channel) }));
    return this.commands.execute(command);
  }
}
