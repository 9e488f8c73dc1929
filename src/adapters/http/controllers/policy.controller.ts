import { Body, Controller, Get, Put } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { parse as parseYaml } from 'yaml';
import { PutPolicyCommand } from '../../../application/commands/put-policy/put-policy.command';
import { GetPolicyQuery } from '../../../application/queries/get-policy/get-policy.query';
import { Principal, isAgent } from '../../../domain/shared/actor';
import { ValidationError } from '../../../domain/shared/domain-error';
import { CurrentPrincipal, Roles, TENANT_ROLES } from '../auth';
import { ApiProblems, BEARER_PROBLEMS, BODY_PROBLEMS } from '../dto/problem.dto';
import { PolicyView } from '../dto/views.dto';
import { POLICY_DOCUMENT_COMPONENT, POLICY_SCHEMA_PATH } from '../policy-schema';

const YAML_EXAMPLE = `rules:
  - match: "get_*"
    level: automatic
  - match: "shell(cmd=rm *)"
    level: deny
  - match: delete_source
    level: confirm
    requireRole: admin
    approvers: [requester, admin]
    timeoutSeconds: 600
`;

@ApiTags('policy')
@ApiBearerAuth()
@Controller('v1/policy')
export class PolicyController {
  constructor(private readonly commands: CommandBus, private readonly queries: QueryBus) {}

  /** Readable by every role of the tenant (CONTRACT §11); a token with no known role reads no policy. */
  @Get()
  @Roles(...TENANT_ROLES)
  @ApiOperation({ operationId: 'getPolicy', summary: 'Get the policy in force', description: 'Any of the four roles. Version 0 (the built-in defaults, no rules) before the first PUT.' })
  @ApiOkResponse({ type: PolicyView })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden')
  get(@CurrentPrincipal() p: Principal) {
    return this.queries.execute(new GetPolicyQuery(p.tenant));
  }

  @Put()
  @Roles('admin')
  @ApiOperation({
    operationId: 'putPolicy',
    summary: 'Put a new policy document',
    description: `Admins. Each accepted document is a new version; an invalid one answers 400 naming the path of each fault, and the version in force stays. JSON, or YAML with Content-Type application/yaml. The document's JSON Schema is served at ${POLICY_SCHEMA_PATH}.`,
    requestBody: {
      required: true,
      description: `A policy document (JSON Schema: ${POLICY_SCHEMA_PATH})`,
      content: {
        'application/json': { schema: { $ref: `#/components/schemas/${POLICY_DOCUMENT_COMPONENT}` } },
        'application/yaml': { schema: { type: 'string', description: `The same document in YAML (JSON Schema: ${POLICY_SCHEMA_PATH})` }, example: YAML_EXAMPLE },
      },
    },
  })
  @ApiOkResponse({ type: PolicyView, description: 'The new version in force' })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden')
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
