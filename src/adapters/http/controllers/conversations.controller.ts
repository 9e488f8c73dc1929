import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ProposeToolCallsCommand } from '../../../application/commands/propose-tool-calls/propose-tool-calls.command';
import { StartConversationCommand } from '../../../application/commands/start-conversation/start-conversation.command';
import { Access, ConversationAccessQuery } from '../../../application/queries/access/access.query';
import { GetConversationQuery } from '../../../application/queries/get-conversation/get-conversation.query';
import { ListConversationsQuery } from '../../../application/queries/list/list.queries';
import { Principal } from '../../../domain/shared/actor';
import { CurrentPrincipal, ForbiddenError, Roles } from '../auth';
import { StartConversationRequest } from '../dto/conversation.dto';
import { ProposeToolCallsRequest } from '../dto/tool-call.dto';
import { enumParam, listParams } from '../request-params';
import { parseBody } from '../validation';

@ApiTags('conversations')
@ApiBearerAuth()
@Controller('v1/conversations')
export class ConversationsController {
  constructor(private readonly commands: CommandBus, private readonly queries: QueryBus) {}

  @Post()
  @Roles('agent')
  @ApiBody({ type: StartConversationRequest })
  async start(@CurrentPrincipal() p: Principal, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    const dto = parseBody(StartConversationRequest, body ?? {});
    const { conversation, created } = await this.commands.execute(new StartConversationCommand(p, dto));
    res.status(created ? 201 : 200);
    return conversation;
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    const status = enumParam('status', query.status, ['active', 'blocked', 'halted'] as const);
    return this.queries.execute(new ListConversationsQuery(p, { ...listParams(query), status }));
  }

  @Get(':id')
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    return this.queries.execute(new GetConversationQuery(p, id));
  }

  @Post(':id/tool-calls')
  @ApiBody({ type: ProposeToolCallsRequest })
  async propose(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    let dto: ProposeToolCallsRequest;
    try {
      dto = parseBody(ProposeToolCallsRequest, body);
    } catch (e) {
      // A bad body is a 400 only for its conversation's agent: 404 and 403 come first (CONTRACT §11).
      const access: Access = await this.queries.execute(new ConversationAccessQuery(p, id));
      if (!access.isOwningAgent) throw new ForbiddenError('Only the agent that started this conversation may propose tool calls in it');
      throw e;
    }
    // The command checks visibility (404) and ownership (403) in its own transaction.
    const calls = dto.toolCalls.map((c) => ({
      externalId: c.id,
      toolName: c.toolName,
      arguments: c.arguments,
      annotations: c.annotations && { ...c.annotations },
      reason: c.reason,
      confidence: c.confidence,
      estimatedCost: c.estimatedCost,
      display: c.display && JSON.parse(JSON.stringify(c.display)),
    }));
    const { replay, conversation, toolCalls } = await this.commands.execute(new ProposeToolCallsCommand(p, id, calls));
    res.status(replay ? 200 : 201);
    return { conversation, toolCalls };
  }
}
