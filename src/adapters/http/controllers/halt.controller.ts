import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiTags } from '@nestjs/swagger';
import { HaltCommand, ResumeCommand } from '../../../application/commands/halt/halt.command';
import { GetStatusQuery } from '../../../application/queries/get-status/get-status.query';
import { haltTarget } from '../../../domain/halt/halt.aggregate';
import { Principal } from '../../../domain/shared/actor';
import { CurrentPrincipal, Roles } from '../auth';
import { HaltRequest, ResumeRequest } from '../dto/halt.dto';
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
  halt(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    const dto = parseBody(HaltRequest, body);
    return this.commands.execute(new HaltCommand(p, haltTarget(dto.scope, dto.id), dto.reason));
  }

  @Post('resume')
  @HttpCode(200)
  @Roles('admin')
  @ApiBody({ type: ResumeRequest })
  resume(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    const dto = parseBody(ResumeRequest, body);
    return this.commands.execute(new ResumeCommand(p, haltTarget(dto.scope, dto.id), dto.reason));
  }

  @Get('status')
  @Roles('admin', 'approver', 'auditor')
  status(@CurrentPrincipal() p: Principal) {
    return this.queries.execute(new GetStatusQuery(p.tenant));
  }
}
