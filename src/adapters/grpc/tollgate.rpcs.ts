import { Injectable } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ClaimExecutionCommand } from '../../application/commands/claim-execution/claim-execution.command';
import { GetStatusQuery } from '../../application/queries/get-status/get-status.query';
import { GetToolCallQuery } from '../../application/queries/get-tool-call/get-tool-call.query';
import { GetQuestionQuery } from '../../application/queries/questions/question.queries';
import { meView } from '../../application/views/views';
import { PersonSightings } from '../../application/persons/person-sightings';
import { Principal } from '../../domain/shared/actor';
import { answerQuestion } from '../api/answer-question.request';
import { askQuestion } from '../api/ask-question.request';
import { decideToolCall } from '../api/decide-tool-call.request';
import { getConversation } from '../api/get-conversation.request';
import { WaitSlots } from '../api/limits';
import { listApprovals } from '../api/list-approvals.request';
import { watchUntilSettled } from '../api/long-poll';
import { proposeToolCalls } from '../api/propose-tool-calls.request';
import { registerTool } from '../api/register-tool.request';
import { reportResult } from '../api/report-result.request';
import { channelMetadata } from '../api/request-params';
import { startConversation } from '../api/start-conversation.request';
import {
  approvalPageMessage,
  conversationMessage,
  enumValue,
  meMessage,
  present,
  proposalBody,
  CarriedResultMsg,
  ProposedToolCallMsg,
  questionMessage,
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

/**
 * The methods of tollgate.v1.Tollgate. Each maps its message to the JSON body its REST route takes and hands it
 * to the same request module (adapters/api), which validates it with the same DTO and builds the same command,
 * with the checks in the contract's order: 401 (GrpcServer) → 404 → 403 → 400 → 409/503.
 */
@Injectable()
export class TollgateRpcs {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly waitSlots: WaitSlots,
    private readonly sightings: PersonSightings,
  ) {}

  /** The person behind an authenticated call is kept on record, as REST's interceptor does (agents are not). */
  seen(principal: Principal): Promise<void> {
    return this.sightings.seen(principal);
  }

  async startConversation(
    c: RpcCall,
    req: {
      id?: string;
      user?: { id?: string; roles?: string[]; name?: string; token?: string } | null;
      title?: string;
      metadata?: PbStruct | null;
    },
  ) {
    const body = present({
      id: req.id,
      // proto3 cannot tell an empty `roles` from none: none, as a REST body that leaves it out.
      user:
        req.user &&
        present({
          id: req.user.id,
          roles: req.user.roles?.length ? req.user.roles : undefined,
          name: req.user.name,
          token: req.user.token,
        }),
      title: req.title,
      metadata: structField(req.metadata, 'metadata'),
    });
    const { conversation, created } = await this.commands.execute(startConversation(c.principal, body));
    return { conversation: conversationMessage(conversation), created };
  }

  async proposeToolCalls(
    c: RpcCall,
    req: {
      conversationId?: string;
      toolCalls?: ProposedToolCallMsg[];
      claim?: boolean;
      claimKey?: string;
      results?: CarriedResultMsg[];
    },
  ) {
    const command = await proposeToolCalls(this.queries, c.principal, req.conversationId ?? '', () =>
      proposalBody(req.toolCalls, req.claim, req.claimKey, req.results),
    );
    const { replay, conversation, toolCalls, claims } = await this.commands.execute(command);
    return {
      conversation: conversationMessage(conversation),
      toolCalls: toolCalls.map(toolCallMessage),
      replay,
      claims: (claims ?? []).map((k) => ({
        toolCallId: k.toolCallId,
        arguments: toStruct(k.arguments),
        receipt: k.receipt,
      })),
    };
  }

  async getConversation(c: RpcCall, req: { conversationId?: string; externalIds?: string[] }) {
    // A repeated field cannot be told apart from one left out when empty: no external ids means every call.
    const externalIds = req.externalIds?.length ? req.externalIds : undefined;
    const query = await getConversation(this.queries, c.principal, req.conversationId ?? '', externalIds);
    return conversationMessage(await this.queries.execute(query));
  }

  async getToolCall(c: RpcCall, req: { id?: string }) {
    return toolCallMessage(await this.queries.execute(new GetToolCallQuery(c.principal, req.id ?? '', 0)));
  }

  /** The call at once, then each change, until it leaves `pending`. */
  async watchToolCall(c: RpcCall, req: { id?: string }, send: (m: Msg) => void): Promise<void> {
    const id = req.id ?? '';
    await watchUntilSettled(
      this.waitSlots,
      c.principal,
      c,
      (wait, signal) => this.queries.execute(new GetToolCallQuery(c.principal, id, wait, signal)),
      (call) => send(toolCallMessage(call)),
      (before, now) => JSON.stringify(now) !== JSON.stringify(before),
    );
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
      response?: string;
      uses?: number;
    },
  ) {
    const command = await decideToolCall(this.queries, c.principal, req.id ?? '', () => ({
      body: present({
        decision: enumValue('DECISION_KIND', req.decision),
        reason: req.reason,
        arguments: structField(req.arguments, 'arguments'),
        scope: enumValue('GRANT_SCOPE', req.scope),
        expiresIn: req.expiresIn,
        args: req.args && Object.keys(req.args).length > 0 ? req.args : undefined,
        response: req.response,
        uses: req.uses,
      }),
      via: () => channelMetadata(c.channel),
    }));
    return toolCallMessage(await this.commands.execute(command));
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
    const command = await reportResult(this.queries, c.principal, req.id ?? '', () =>
      present({
        outcome: enumValue('RESULT_OUTCOME', req.outcome),
        output: valueField(req.output, 'output'),
        error: req.error,
      }),
    );
    return toolCallMessage(await this.commands.execute(command));
  }

  async listApprovals(c: RpcCall, req: { status?: string; cursor?: string; limit?: number }) {
    const query = listApprovals(c.principal, {
      status: enumValue('TOOL_CALL_STATUS', req.status),
      cursor: req.cursor,
      limit: req.limit ? String(req.limit) : undefined,
    });
    return approvalPageMessage(await this.queries.execute(query));
  }

  async registerTool(
    c: RpcCall,
    req: {
      name?: string;
      description?: string;
      isReadOnly?: boolean;
      requiresApproval?: boolean;
      destructive?: boolean;
      redact?: string[];
      inputSchema?: PbStruct | null;
    },
  ) {
    const command = registerTool(c.principal, req.name ?? '', () =>
      present({
        description: req.description,
        isReadOnly: req.isReadOnly,
        requiresApproval: req.requiresApproval,
        destructive: req.destructive,
        redact: req.redact?.length ? req.redact : undefined,
        inputSchema: structField(req.inputSchema, 'inputSchema'),
      }),
    );
    const { tool, created } = await this.commands.execute(command);
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
    const command = await askQuestion(this.queries, c.principal, req.conversationId ?? '', () =>
      present({
        text: req.text,
        choices: req.choices?.length ? req.choices : undefined,
        allowFreeText: req.allowFreeText,
        timeoutSeconds: req.timeoutSeconds,
        askTo: req.askTo?.length ? req.askTo : undefined,
        id: req.id,
      }),
    );
    const { question } = await this.commands.execute(command);
    return questionMessage(question);
  }

  async getQuestion(c: RpcCall, req: { id?: string }) {
    return questionMessage(await this.queries.execute(new GetQuestionQuery(c.principal, req.id ?? '', 0)));
  }

  /** The question at once, then once more when it leaves `pending`. */
  async watchQuestion(c: RpcCall, req: { id?: string }, send: (m: Msg) => void): Promise<void> {
    const id = req.id ?? '';
    await watchUntilSettled(
      this.waitSlots,
      c.principal,
      c,
      (wait, signal) => this.queries.execute(new GetQuestionQuery(c.principal, id, wait, signal)),
      (question) => send(questionMessage(question)),
      (_, now) => now.status !== 'pending',
    );
  }

  async answerQuestion(c: RpcCall, req: { id?: string; answer?: string }) {
    const command = await answerQuestion(this.queries, c.principal, req.id ?? '', () => ({
      body: present({ answer: req.answer }),
      via: () => channelMetadata(c.channel),
    }));
    return questionMessage(await this.commands.execute(command));
  }
}
