import { Body, Controller, Get, Param, Put, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { RegisterToolCommand } from '../../../application/commands/register-tool/register-tool.command';
import { GetToolQuery } from '../../../application/queries/get-tool/get-tool.query';
import { ListToolsQuery } from '../../../application/queries/list/list.queries';
import { Principal } from '../../../domain/shared/actor';
import { ValidationError } from '../../../domain/shared/domain-error';
import { TOOL_NAME_PATTERN } from '../../../domain/tool/tool.aggregate';
import { CurrentPrincipal, Roles, TENANT_ROLES } from '../auth';
import { RegisterToolRequest } from '../dto/tool.dto';
import { listParams } from '../request-params';
import { parseBody } from '../validation';

@ApiTags('tools')
@ApiBearerAuth()
@Controller('v1/tools')
export class ToolsController {
  constructor(private readonly commands: CommandBus, private readonly queries: QueryBus) {}

  @Put(':name')
  @Roles('agent', 'admin')
  @ApiBody({ type: RegisterToolRequest })
  async register(@CurrentPrincipal() p: Principal, @Param('name') name: string, @Body() body: unknown, @Res({ passthrough: true }) res: Response) {
    if (!TOOL_NAME_PATTERN.test(name)) throw new ValidationError([{ path: 'name', message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' }]);
    const dto = parseBody(RegisterToolRequest, body ?? {});
    const def = { description: dto.description, isReadOnly: dto.isReadOnly ?? false, requiresApproval: dto.requiresApproval ?? false, destructive: dto.destructive ?? false };
    const { tool, created } = await this.commands.execute(new RegisterToolCommand(p, name, def));
    res.status(created ? 201 : 200);
    return tool;
  }

  @Get()
  @Roles(...TENANT_ROLES)
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    return this.queries.execute(new ListToolsQuery(p, listParams(query)));
  }

  @Get(':name')
  @Roles(...TENANT_ROLES)
  get(@CurrentPrincipal() p: Principal, @Param('name') name: string) {
    return this.queries.execute(new GetToolQuery(p.tenant, name));
  }
}
