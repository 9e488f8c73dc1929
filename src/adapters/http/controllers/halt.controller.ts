import { Body, Controller, Get, Headers, HttpCode, Post } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiTags } from '@nestjs/swagger';
import { HaltCommand, ResumeCommand } from '../../../application/commands/halt/halt.command';
import { GetStatusQuery } from '../../../application/queries/get-status/get-status.query';
import { haltTarget } from '../../../domain/halt/halt.aggregate';
import { Principal } from '../../../domain/shared/actor';
import { CurrentPrincipal, Roles } from '../auth';
import { HaltRequest, ResumeRequest } from '../dto/halt.dto';
import { channelHeader } from '../request-params';
import { parseBody } from '../validation';

@ApiTags('halt')
@ApiBearerAuth()
@Controller('v1')
export class HaltController {
  constructor(private readonly commands: CommandBus, private readonly queries: QueryBus) {}

  @Post('halt')
  @HttpCode(200)
  @Roles('admin')
  @ApiBody({ type: HaltRequest })
  @ApiHeader({ name: 'X-Tollgate-Channel', required: false, description: 'web, cli or api (default)' })
  halt(@CurrentPrincipal() p: Principal, @Body() body: unknown, @Headers('x-tollgate-channel') channel?: string) {
    const dto = parseBody(HaltRequest, body);
    return this.commands.execute(new HaltCommand(p, haltTarget(dto.scope, dto.id), dto.reason, channelHeader(channel)));
  }

  @Post('resume')
  @HttpCode(200)
  @Roles('admin')
  @ApiBody({ type: ResumeRequest })
  @ApiHeader({ name: 'X-Tollgate-Channel', required: false, description: 'web, cli or api (default)' })
  resume(@CurrentPrincipal() p: Principal, @Body() body: unknown, @Headers('x-tollgate-channel') channel?: string) {
    const dto = parseBody(ResumeRequest, body);
    return this.commands.execute(new ResumeCommand(p, haltTarget(dto.scope, dto.id), dto.reason, channelHeader(channel)));
  }

  @Get('status')
  @Roles('admin', 'approver', 'auditor')
  status(@CurrentPrincipal() p: Principal) {
    return this.queries.execute(new GetStatusQuery(p.tenant));
  }
}
