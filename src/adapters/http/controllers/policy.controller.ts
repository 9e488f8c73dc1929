import { Body, Controller, Get, Put } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiConsumes, ApiTags } from '@nestjs/swagger';
import { parse as parseYaml } from 'yaml';
import { PutPolicyCommand } from '../../../application/commands/put-policy/put-policy.command';
import { GetPolicyQuery } from '../../../application/queries/get-policy/get-policy.query';
import { Principal, isAgent } from '../../../domain/shared/actor';
import { ValidationError } from '../../../domain/shared/domain-error';
import { CurrentPrincipal, Roles, TENANT_ROLES } from '../auth';

@ApiTags('policy')
@ApiBearerAuth()
@Controller('v1/policy')
export class PolicyController {
  constructor(private readonly commands: CommandBus, private readonly queries: QueryBus) {}

  /** Readable by every role of the tenant (CONTRACT §11); a token with no known role reads no policy. */
  @Get()
  @Roles(...TENANT_ROLES)
  get(@CurrentPrincipal() p: Principal) {
    return this.queries.execute(new GetPolicyQuery(p.tenant));
  }

  @Put()
  @Roles('admin')
  @ApiConsumes('application/json', 'application/yaml')
  async put(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    const document = typeof body === 'string' ? parseYamlBody(body) : body;
    const by = { id: p.id, kind: isAgent(p) ? ('agent' as const) : ('person' as const), via: 'api' as const, name: p.name, roles: p.roles };
    const { policy } = await this.commands.execute(new PutPolicyCommand(p.tenant, by, document, { source: 'api' }));
    return policy;
  }
}

/** YAML (Content-Type application/yaml) is parsed to the same document JSON would give. */
export function parseYamlBody(text: string): unknown {
  try {
    return parseYaml(text, { maxAliasCount: 50 });
  } catch (e) {
    throw new ValidationError([{ path: '', message: `not valid YAML: ${(e as Error).message.split('\n')[0]}` }]);
  }
}
