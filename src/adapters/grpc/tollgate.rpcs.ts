import { Injectable } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ClaimExecutionCommand } from '../../application/commands/claim-execution/claim-execution.command';
import { DecideToolCallCommand } from '../../application/commands/decide-tool-call/decide-tool-call.command';
import { ProposeToolCallsCommand } from '../../application/commands/propose-tool-calls/propose-tool-calls.command';
import { RegisterToolCommand } from '../../application/commands/register-tool/register-tool.command';
import { ReportResultCommand } from '../../application/commands/report-result/report-result.command';
import { StartConversationCommand } from '../../application/commands/start-conversation/start-conversation.command';
import { Access, ConversationAccessQuery, ToolCallAccessQuery } from '../../application/queries/access/access.query';
import { GetStatusQuery } from '../../application/queries/get-status/get-status.query';
import { GetToolCallQuery } from '../../application/queries/get-tool-call/get-tool-call.query';
import { ListApprovalsQuery } from '../../application/queries/list/list.queries';
import { AnswerQuestionCommand, AskQuestionCommand } from '../../application/commands/questions/question.commands';
import { GetQuestionQuery, QuestionAccessQuery } from '../../application/queries/questions/question.queries';
import { AnswerQuestionRequest, AskQuestionRequest } from '../http/dto/question.dto';
import { meView } from '../../application/views/views';
import { TOOL_CALL_STATUSES } from '../../domain/conversation/tool-call-status';
import { Channel, Principal, isAgent } from '../../domain/shared/actor';
import { DomainError, ValidationError } from '../../domain/shared/domain-error';
import { TOOL_NAME_PATTERN } from '../../domain/tool/tool.aggregate';
import { ForbiddenError } from '../http/auth';
import { StartConversationRequest } from '../http/dto/conversation.dto';
import { DecisionRequest, ProposeToolCallsRequest, ResultRequest, proposedCalls } from '../http/dto/tool-call.dto';
import { RegisterToolRequest } from '../http/dto/tool.dto';
import { WaitSlots } from '../http/rate-limit';
import { enumParam, listParams } from '../http/request-params';
import { parseBody } from '../http/validation';
import {
  approvalPageMessage,
  conversationMessage,
  enumValue,
  present,
  proposalBody,
  ProposedToolCallMsg,
  questionMessage,
  meMessage,
  structField,
  tenantStatusMessage,
  toolCallMessage,
  toolMessage,
  valueField,
} from './messages';
import { PbStruct, PbValue, toStruct } from './protobuf-json';

type Msg = Record<string, unknown>;

/** What a handler knows of its call beyond the request: who calls, and how it ends. */
export interface RpcCall {
  principal: Principal;
  /** `x-tollgate-channel` metadata, as sent. */
  channel?: string;
  /** Aborted when the client cancels or the server shuts down. */
  signal: AbortSignal;
  /** True once the server is shutting down. */
  closing(): boolean;
}

const MAX_OUTPUT_BYTES = 64 * 1024;
/** How long one read of a watch waits before it reads again (it is woken sooner by any change). */
const WATCH_SLICE_S = 60;

/** What a person may name in `x-tollgate-channel` over gRPC: where they decided. Slack and the policy are never a caller's to claim. */
const GRPC_CHANNELS = ['grpc', 'cli', 'web', 'mcp'] as const satisfies readonly Channel[];

/**
 * The methods of tollgate.v1.Tollgate. Each builds the same command or query as its REST route (the
 * controllers under adapters/http/controllers), validated by the same DTO from the same JSON, with the checks
 * in the contract's order: 401 (GrpcServer) → 404 → 403 → 400 → 409/503.
 */
@Injectable()
export class TollgateRpcs {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly waitSlots: WaitSlots,
  ) {}

  async startConversation(
    c: RpcCall,
    req: {
      id?: string;
      user?: { id?: string; roles?: string[]; name?: string } | null;
      title?: string;
      metadata?: PbStruct | null;
    },
  ) {
    const body = present({
      id: req.id,
      user: req.user && present({ id: req.user.id ?? '', roles: req.user.roles, name: req.user.name }),
      title: req.title,
      metadata: structField(req.metadata, 'metadata'),
    });
    const dto = parseBody(StartConversationRequest, body);
    const { conversation, created } = await this.commands.execute(new StartConversationCommand(c.principal, dto));
    return { conversation: conversationMessage(conversation), created };
  }

  async proposeToolCalls(c: RpcCall, req: { conversationId?: string; toolCalls?: ProposedToolCallMsg[] }) {
    const p = c.principal;
    const id = req.conversationId ?? '';
    let dto: ProposeToolCallsRequest;
    try {
      dto = parseBody(ProposeToolCallsRequest, proposalBody(req.toolCalls));
    } catch (e) {
      // A bad request is INVALID_ARGUMENT only for its conversation's agent: NOT_FOUND and PERMISSION_DENIED come first.
      const access = await this.queries.execute(new ConversationAccessQuery(p, id));
      if (!access.isOwningAgent)
        throw new ForbiddenError('Only the agent that started this conversation may propose tool calls in it');
      throw e;
    }
    const calls = proposedCalls(dto);
    const { replay, conversation, toolCalls } = await this.commands.execute(new ProposeToolCallsCommand(p, id, calls));
    return {
      conversation: conversationMessage(conversation),
      toolCalls: toolCalls.map(toolCallMessage),
      replay,
    };
  }

  async getToolCall(c: RpcCall, req: { id?: string }) {
    return toolCallMessage(await this.queries.execute(new GetToolCallQuery(c.principal, req.id ?? '', 0)));
  }

  /**
   * The call at once, then each change, until it leaves `pending`. Each read waits on the same waiters as a
   * REST long-poll (woken after a commit here, by a notification from another instance, or by the periodic
   * re-check), and the watch holds one of the caller's wait slots while open.
   */
  async watchToolCall(c: RpcCall, req: { id?: string }, send: (m: Msg) => void): Promise<void> {
    const id = req.id ?? '';
    const release = this.waitSlots.acquire(c.principal); // RESOURCE_EXHAUSTED past the per-token or per-tenant bound
    try {
      let last = await this.queries.execute(new GetToolCallQuery(c.principal, id, 0));
      send(toolCallMessage(last));
      while (last.status === 'pending' && !c.signal.aborted) {
        const now = await this.queries.execute(new GetToolCallQuery(c.principal, id, WATCH_SLICE_S, c.signal));
        if (c.signal.aborted && !c.closing()) return; // the client went away
        if (JSON.stringify(now) !== JSON.stringify(last)) send(toolCallMessage(now));
        last = now;
      }
      // Stopping: the call as it stands went out above; the client watches again, here or on another instance.
      if (last.status === 'pending' && c.closing()) {
        throw new DomainError('unavailable', 'unavailable', 'The server is shutting down; watch again', {
          retryAfter: 1,
        });
      }
    } finally {
      release();
    }
  }

  async decideToolCall(
    c: RpcCall,
    req: {
      id?: string;
      decision?: string;
      reason?: string;
      arguments?: PbStruct | null;
      scope?: string;
      expiresIn?: number;
      args?: Record<string, string>;
    },
  ) {
    const p = c.principal;
    const id = req.id ?? '';
    const { dto, via } = await this.validOrAccessFirst(
      p,
      id,
      () => {
        const body = present({
          decision: enumValue('DECISION_KIND', req.decision),
          reason: req.reason,
          arguments: structField(req.arguments, 'arguments'),
          scope: enumValue('GRANT_SCOPE', req.scope),
          expiresIn: req.expiresIn,
          args: req.args && Object.keys(req.args).length > 0 ? req.args : undefined,
        });
        const dto = parseBody(DecisionRequest, body);
        const via =
          enumParam('x-tollgate-channel', c.channel?.trim().toLowerCase() || undefined, GRPC_CHANNELS) ?? 'grpc';
        if (dto.arguments !== undefined && dto.decision !== 'approve')
          throw new ValidationError([{ path: 'arguments', message: 'is allowed with decision "approve" only' }]);
        if (dto.scope !== undefined && dto.decision !== 'always_allow')
          throw new ValidationError([{ path: 'scope', message: 'is allowed with decision "always_allow" only' }]);
        return { dto, via }; // expiresIn and args are checked by the command, as for every way in
      },
      (a) => a.mayDecide,
      (a) =>
        a.isAgent
          ? 'Agent tokens cannot decide tool calls: approval comes from people'
          : 'Your roles may not decide this tool call',
    );
    // The command checks visibility (NOT_FOUND) and the right to decide (PERMISSION_DENIED) again, in its transaction.
    const call = await this.commands.execute(
      new DecideToolCallCommand(
        { ...p, via },
        id,
        { decision: dto.decision, reason: dto.reason, arguments: dto.arguments, scope: dto.scope },
        { expiresIn: dto.expiresIn, args: dto.args },
      ),
    );
    return toolCallMessage(call);
  }

  async claimExecution(c: RpcCall, req: { id?: string }) {
    const {
      toolCall,
      arguments: args,
      receipt,
    } = await this.commands.execute(new ClaimExecutionCommand(c.principal, req.id ?? ''));
    return { toolCall: toolCallMessage(toolCall), arguments: toStruct(args), receipt };
  }

  async reportResult(c: RpcCall, req: { id?: string; outcome?: string; output?: PbValue | null; error?: string }) {
    const p = c.principal;
    const id = req.id ?? '';
    const dto = await this.validOrAccessFirst(
      p,
      id,
      () => {
        const dto = parseBody(
          ResultRequest,
          present({
            outcome: enumValue('RESULT_OUTCOME', req.outcome),
            output: valueField(req.output, 'output'),
            error: req.error,
          }),
        );
        if (dto.output !== undefined && Buffer.byteLength(JSON.stringify(dto.output) ?? '') > MAX_OUTPUT_BYTES) {
          throw new DomainError('payload_too_large', 'too_large', 'output is larger than 64 KiB once serialised');
        }
        return dto;
      },
      (a) => a.isOwningAgent,
      () => "Only the conversation's agent may claim or report this tool call",
    );
    return toolCallMessage(
      await this.commands.execute(
        new ReportResultCommand(p, id, { outcome: dto.outcome, output: dto.output, error: dto.error }),
      ),
    );
  }

  async listApprovals(c: RpcCall, req: { status?: string; cursor?: string; limit?: number }) {
    const p = c.principal;
    if (isAgent(p)) throw new ForbiddenError('The approvals inbox is for people; agent tokens cannot decide');
    const status = enumParam('status', enumValue('TOOL_CALL_STATUS', req.status), TOOL_CALL_STATUSES) ?? 'pending';
    const page = await this.queries.execute(
      new ListApprovalsQuery(p, {
        ...listParams({ cursor: req.cursor, limit: req.limit ? String(req.limit) : undefined }),
        status,
      }),
    );
    return approvalPageMessage(page);
  }

  async registerTool(
    c: RpcCall,
    req: {
      name?: string;
      description?: string;
      isReadOnly?: boolean;
      requiresApproval?: boolean;
      destructive?: boolean;
    },
  ) {
    const name = req.name ?? '';
    if (!TOOL_NAME_PATTERN.test(name))
      throw new ValidationError([{ path: 'name', message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' }]);
    const dto = parseBody(
      RegisterToolRequest,
      present({
        description: req.description,
        isReadOnly: req.isReadOnly,
        requiresApproval: req.requiresApproval,
        destructive: req.destructive,
      }),
    );
    const def = {
      description: dto.description,
      isReadOnly: dto.isReadOnly ?? false,
      requiresApproval: dto.requiresApproval ?? false,
      destructive: dto.destructive ?? false,
    };
    const { tool, created } = await this.commands.execute(new RegisterToolCommand(c.principal, name, def));
    return { tool: toolMessage(tool), created };
  }

  async getMe(c: RpcCall) {
    return meMessage(meView(c.principal));
  }

  async getStatus(c: RpcCall) {
    return tenantStatusMessage(await this.queries.execute(new GetStatusQuery(c.principal.tenant)));
  }

  async askQuestion(
    c: RpcCall,
    req: {
      conversationId?: string;
      text?: string;
      choices?: string[];
      allowFreeText?: boolean;
      timeoutSeconds?: number;
      askTo?: string[];
      id?: string;
    },
  ) {
    const p = c.principal;
    const id = req.conversationId ?? '';
    let dto: AskQuestionRequest;
    try {
      dto = parseBody(
        AskQuestionRequest,
        present({
          text: req.text,
          choices: req.choices?.length ? req.choices : undefined,
          allowFreeText: req.allowFreeText,
          timeoutSeconds: req.timeoutSeconds,
          askTo: req.askTo?.length ? req.askTo : undefined,
          id: req.id,
        }),
      );
    } catch (e) {
      const access = await this.queries.execute(new ConversationAccessQuery(p, id));
      if (!access.isOwningAgent)
        throw new ForbiddenError('Only the agent that started this conversation may ask questions in it');
      throw e;
    }
    const { question } = await this.commands.execute(
      new AskQuestionCommand(
        p,
        id,
        {
          text: dto.text,
          choices: dto.choices,
          allowFreeText: dto.allowFreeText,
          timeoutSeconds: dto.timeoutSeconds,
          askTo: dto.askTo,
        },
        dto.id,
      ),
    );
    return questionMessage(question);
  }

  async getQuestion(c: RpcCall, req: { id?: string }) {
    return questionMessage(await this.queries.execute(new GetQuestionQuery(c.principal, req.id ?? '', 0)));
  }

  /** The question at once, then when it leaves `pending`; holds one of the caller's wait slots while open, as WatchToolCall. */
  async watchQuestion(c: RpcCall, req: { id?: string }, send: (m: Msg) => void): Promise<void> {
    const id = req.id ?? '';
    const release = this.waitSlots.acquire(c.principal);
    try {
      let last = await this.queries.execute(new GetQuestionQuery(c.principal, id, 0));
      send(questionMessage(last));
      while (last.status === 'pending' && !c.signal.aborted) {
        last = await this.queries.execute(new GetQuestionQuery(c.principal, id, WATCH_SLICE_S, c.signal));
        if (c.signal.aborted && !c.closing()) return; // the client went away
        if (last.status !== 'pending') send(questionMessage(last));
      }
      if (last.status === 'pending' && c.closing())
        throw new DomainError('unavailable', 'unavailable', 'The server is shutting down; watch again', {
          retryAfter: 1,
        });
    } finally {
      release();
    }
  }

  async answerQuestion(c: RpcCall, req: { id?: string; answer?: string }) {
    const p = c.principal;
    const id = req.id ?? '';
    let dto: AnswerQuestionRequest;
    let via: Channel;
    try {
      dto = parseBody(AnswerQuestionRequest, present({ answer: req.answer }));
      via = enumParam('x-tollgate-channel', c.channel?.trim().toLowerCase() || undefined, GRPC_CHANNELS) ?? 'grpc';
    } catch (e) {
      const access = await this.queries.execute(new QuestionAccessQuery(p, id));
      if (!access.mayAnswer)
        throw new ForbiddenError(
          access.isAgent
            ? 'Agent tokens cannot answer questions: answers come from people'
            : 'Your roles may not answer this question',
        );
      throw e;
    }
    return questionMessage(await this.commands.execute(new AnswerQuestionCommand(p, id, dto.answer, via)));
  }

  /** As the REST controller's: only a bad request first reads who may do what, so NOT_FOUND and PERMISSION_DENIED still win over INVALID_ARGUMENT. */
  private async validOrAccessFirst<T>(
    p: Principal,
    id: string,
    check: () => T,
    allowed: (a: Access) => boolean,
    refusal: (a: Access) => string,
  ): Promise<T> {
    try {
      return check();
    } catch (e) {
      const access = await this.queries.execute(new ToolCallAccessQuery(p, id));
      if (!allowed(access)) throw new ForbiddenError(refusal(access));
      throw e;
    }
  }
}
