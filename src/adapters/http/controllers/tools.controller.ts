import { Body, Controller, Get, Param, Put, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { GetToolQuery } from '../../../application/queries/get-tool/get-tool.query';
import { ListToolsQuery } from '../../../application/queries/list/list.queries';
import { Principal } from '../../../domain/shared/actor';
import { registerTool } from '../../api/register-tool.request';
import { CurrentPrincipal, Roles, TENANT_ROLES } from '../auth';
import { ApiIdParam, ApiListQuery } from '../../api/dto/api-params';
import { ApiProblems, BEARER_PROBLEMS, BODY_PROBLEMS } from '../../api/dto/problem.dto';
import { RegisterToolRequest } from '../../api/dto/tool.dto';
import { ToolPageView, ToolView } from '../../api/dto/views.dto';
import { listParams } from '../../api/request-params';

@ApiTags('tools')
@ApiBearerAuth()
@Controller('v1/tools')
export class ToolsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Put(':name')
  @Roles('agent', 'admin')
  @ApiOperation({
    operationId: 'registerTool',
    summary: 'Register or update a tool',
    description:
      'Agents and admins. Flags left out are false. An agent cannot change a tool an admin registered (403).',
  })
  @ApiIdParam('name', 'The tool name', 'delete_source')
  @ApiBody({
    type: RegisterToolRequest,
    required: false,
    examples: {
      destructive: {
        summary: 'A destructive tool',
        value: { description: 'Delete a knowledge source', destructive: true },
      },
    },
  })
  @ApiCreatedResponse({ type: ToolView, description: 'Registered' })
  @ApiOkResponse({ type: ToolView, description: 'It existed: updated, or unchanged' })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden')
  async register(
    @CurrentPrincipal() p: Principal,
    @Param('name') name: string,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: FastifyReply,
  ) {
    const { tool, created } = await this.commands.execute(registerTool(p, name, () => body));
    res.status(created ? 201 : 200);
    return tool;
  }

  @Get()
  @Roles(...TENANT_ROLES)
  @ApiOperation({
    operationId: 'listTools',
    summary: "List the tenant's tools",
    description: 'In name order. Any of the four roles.',
  })
  @ApiListQuery()
  @ApiOkResponse({ type: ToolPageView })
  @ApiProblems(...BEARER_PROBLEMS, 'validation_failed', 'forbidden')
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    return this.queries.execute(new ListToolsQuery(p, listParams(query)));
  }

  @Get(':name')
  @Roles(...TENANT_ROLES)
  @ApiOperation({ operationId: 'getTool', summary: 'Get a tool', description: 'Any of the four roles.' })
  @ApiIdParam('name', 'The tool name', 'delete_source')
  @ApiOkResponse({ type: ToolView })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden', 'not_found')
  get(@CurrentPrincipal() p: Principal, @Param('name') name: string) {
    return this.queries.execute(new GetToolQuery(p.tenant, name));
  }
}
