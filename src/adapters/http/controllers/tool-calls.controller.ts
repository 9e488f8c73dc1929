import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ClaimExecutionCommand } from '../../../application/commands/claim-execution/claim-execution.command';
import { DecideToolCallCommand } from '../../../application/commands/decide-tool-call/decide-tool-call.command';
import { ReportResultCommand } from '../../../application/commands/report-result/report-result.command';
import { Access, ToolCallAccessQuery } from '../../../application/queries/access/access.query';
import { GetToolCallQuery } from '../../../application/queries/get-tool-call/get-tool-call.query';
import { Principal } from '../../../domain/shared/actor';
import { DomainError, ValidationError } from '../../../domain/shared/domain-error';
import { CurrentPrincipal, ForbiddenError } from '../auth';
import { DecisionRequest, ResultRequest } from '../dto/tool-call.dto';
import { channelHeader, intParam } from '../request-params';
import { parseBody } from '../validation';
import { WaitSlots } from '../rate-limit';

const MAX_OUTPUT_BYTES = 64 * 1024;

/** Checks run in the contract's order: 401 (guard) → 404 → 403 → 400 → 409/503. */
@ApiTags('tool calls')
@ApiBearerAuth()
@Controller('v1/tool-calls')
export class ToolCallsController {
  constructor(private readonly commands: CommandBus, private readonly queries: QueryBus, private readonly waitSlots: WaitSlots) {}

  @Get(':id')
  @ApiQuery({ name: 'wait', required: false, description: 'seconds (0–60) to wait while the call is pending' })
  async get(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query('wait') wait: unknown, @Res({ passthrough: true }) res: Response) {
    let seconds: number;
    try {
      seconds = intParam('wait', wait, 0, 60, 0);
    } catch (e) {
      await this.access(p, id); // a call the caller cannot see is a 404 before a bad `wait` is a 400
      throw e;
    }
    // The query checks visibility itself: no separate access read on the hot path of every long-poll.
    if (seconds === 0) return this.queries.execute(new GetToolCallQuery(p, id, 0));
    const release = this.waitSlots.acquire(p); // 429 past the per-token or per-tenant bound
    // A client that goes away frees its slot and its waiter now, not when its wait would have ended.
    const gone = new AbortController();
    const leave = () => {
      release();
      gone.abort();
    };
    res.once('close', leave);
    try {
      return await this.queries.execute(new GetToolCallQuery(p, id, seconds, gone.signal));
    } finally {
      res.off('close', leave);
      release();
    }
  }

  @Post(':id/decision')
  @HttpCode(200)
  @ApiBody({ type: DecisionRequest })
  @ApiHeader({ name: 'X-Tollgate-Channel', required: false, description: 'web, cli or api (default)' })
  async decide(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown, @Headers('x-tollgate-channel') channel?: string) {
    const { dto, via } = await this.validOrAccessFirst(p, id, () => {
      const dto = parseBody(DecisionRequest, body);
      const via = channelHeader(channel);
      if (dto.arguments !== undefined && dto.decision !== 'approve') throw new ValidationError([{ path: 'arguments', message: 'is allowed with decision "approve" only' }]);
      if (dto.scope !== undefined && dto.decision !== 'always_allow') throw new ValidationError([{ path: 'scope', message: 'is allowed with decision "always_allow" only' }]);
      return { dto, via };
    }, (a) => a.mayDecide, (a) => (a.isAgent ? 'Agent tokens cannot decide tool calls: approval comes from people' : 'Your roles may not decide this tool call'));
    // The command checks visibility (404) and the right to decide (403) again, in its transaction.
    return this.commands.execute(new DecideToolCallCommand({ ...p, via }, id, { decision: dto.decision, reason: dto.reason, arguments: dto.arguments, scope: dto.scope }));
  }

  @Post(':id/execution')
  @HttpCode(200)
  claim(@CurrentPrincipal() p: Principal, @Param('id') id: string) {
    // No body to check: the command's own 404 and 403 are the only checks, in its transaction.
    return this.commands.execute(new ClaimExecutionCommand(p, id));
  }

  @Post(':id/result')
  @HttpCode(200)
  @ApiBody({ type: ResultRequest })
  async result(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Body() body: unknown) {
    const dto = await this.validOrAccessFirst(p, id, () => {
      const dto = parseBody(ResultRequest, body);
      if (dto.output !== undefined && Buffer.byteLength(JSON.stringify(dto.output) ?? '') > MAX_OUTPUT_BYTES) {
        throw new DomainError('payload_too_large', 'too_large', 'output is larger than 64 KiB once serialised');
      }
      return dto;
    }, (a) => a.isOwningAgent, () => "Only the conversation's agent may claim or report this tool call");
    return this.commands.execute(new ReportResultCommand(p, id, { outcome: dto.outcome, output: dto.output, error: dto.error }));
  }

  private access(p: Principal, id: string): Promise<Access> {
    return this.queries.execute(new ToolCallAccessQuery(p, id));
  }

  /**
   * Checks the request; only when it is bad does it first read who may see and do what, so a 404 or 403
   * still wins over the 400/413 (CONTRACT §11) without an extra read on every good request.
   */
  private async validOrAccessFirst<T>(p: Principal, id: string, check: () => T, allowed: (a: Access) => boolean, refusal: (a: Access) => string): Promise<T> {
    try {
      return check();
    } catch (e) {
      const access = await this.access(p, id);
      if (!allowed(access)) throw new ForbiddenError(refusal(access));
      throw e;
    }
  }
}
