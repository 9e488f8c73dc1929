import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { HeldForApprovalView } from '../../api/dto/change.dto';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  ApiBearerAuth,
  ApiBody,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { parse as parseYaml } from 'yaml';
import { PutPolicyCommand } from '../../../application/commands/put-policy/put-policy.command';
import { RollBackPolicyCommand } from '../../../application/commands/roll-back-policy/roll-back-policy.command';
import { GetPolicyQuery } from '../../../application/queries/get-policy/get-policy.query';
import { AnalysePolicyQuery } from '../../../application/queries/get-policy/analyse-policy.query';
import {
  GetPolicyVersionQuery,
  ListPolicyVersionsQuery,
} from '../../../application/queries/policy-versions/policy-versions.queries';
import { SimulatePolicyQuery } from '../../../application/queries/simulate-policy/simulate-policy.query';
import { Actor, Principal, isAgent } from '../../../domain/shared/actor';
import { ValidationError } from '../../../domain/shared/domain-error';
import { CurrentPrincipal, Roles, TENANT_ROLES } from '../auth';
import { ApiListQuery } from '../../api/dto/api-params';
import {
  MAX_SIMULATED_CALLS,
  PolicyAnalysisDto,
  PolicySimulationDto,
  PolicyVersionDto,
  PolicyVersionPageDto,
  RollbackPolicyRequest,
  SimulatePolicyRequest,
} from '../../api/dto/policy-lifecycle.dto';
import { ApiProblems, BEARER_PROBLEMS, BODY_PROBLEMS, ProblemView } from '../../api/dto/problem.dto';
import { toolFlagsOf } from '../../api/dto/tool-call.dto';
import { PolicyView } from '../../api/dto/views.dto';
import { POLICY_DOCUMENT_COMPONENT, POLICY_SCHEMA_PATH } from '../../api/policy-schema';
import { listParams } from '../../api/request-params';
import { parseBody } from '../../api/validation';
import { PROBLEM_CONTENT_TYPE, problem } from '../../api/problem';

/** Recorded calls a simulation judges when the request names no window. */
const DEFAULT_SIMULATION_DAYS = 7;

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
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  /** Readable by every role of the tenant (CONTRACT §11); a token with no known role reads no policy. */
  @Get()
  @Roles(...TENANT_ROLES)
  @ApiOperation({
    operationId: 'getPolicy',
    summary: 'Get the policy in force',
    description: 'Any of the four roles. Version 0 (the built-in defaults, no rules) before the first PUT.',
  })
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
        'application/yaml': {
          schema: { type: 'string', description: `The same document in YAML (JSON Schema: ${POLICY_SCHEMA_PATH})` },
          example: YAML_EXAMPLE,
        },
      },
    },
  })
  @ApiOkResponse({ type: PolicyView, description: 'The new version in force' })
  @ApiResponse({
    status: 202,
    type: HeldForApprovalView,
    description:
      'Governance (`governance: {quorum}` in the policy in force): held for other admins as a pending change (/v1/changes); nothing changed yet',
  })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden')
  async put(@CurrentPrincipal() p: Principal, @Body() body: unknown, @Res({ passthrough: true }) res: FastifyReply) {
    const document = typeof body === 'string' ? parseYamlBody(body) : body;
    const { policy, pendingChange } = await this.commands.execute(
      new PutPolicyCommand(p.tenant, actorOf(p), document, { source: 'api' }),
    );
    if (pendingChange) return held(res, { pendingChange });
    return policy;
  }

  /** For the people who write, review and audit the policy: not agents (a large document costs seconds to analyse). */
  @Get('analysis')
  @Roles('admin', 'approver', 'auditor')
  @ApiOperation({
    operationId: 'analysePolicy',
    summary: 'Find rules that never decide, or that decide out of their order',
    description:
      'Admins, approvers and auditors (not agents). Reads the policy in force: rules another matches every call of and wins (unreachable), and rules listed after a laxer overlapping rule that still decide the calls both match (order).',
  })
  @ApiOkResponse({ type: PolicyAnalysisDto })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden')
  analysis(@CurrentPrincipal() p: Principal) {
    return this.queries.execute(new AnalysePolicyQuery(p.tenant));
  }

  @Get('versions')
  @Roles(...TENANT_ROLES)
  @ApiOperation({
    operationId: 'listPolicyVersions',
    summary: 'List the policy versions',
    description: 'Any of the four roles, as GET /v1/policy. Newest first, without their documents.',
  })
  @ApiListQuery()
  @ApiOkResponse({ type: PolicyVersionPageDto })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden', 'validation_failed')
  versions(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    return this.queries.execute(new ListPolicyVersionsQuery(p.tenant, listParams(query)));
  }

  @Get('versions/:version')
  @Roles(...TENANT_ROLES)
  @ApiOperation({
    operationId: 'getPolicyVersion',
    summary: 'Get one policy version with its document',
    description: 'Any of the four roles. Version 0 (the built-in defaults) is not stored: 404.',
  })
  @ApiParam({ name: 'version', description: 'The version number', schema: { type: 'integer', minimum: 1 }, example: 2 })
  @ApiOkResponse({ type: PolicyVersionDto })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden', 'not_found', 'validation_failed')
  version(@CurrentPrincipal() p: Principal, @Param('version') raw: string) {
    if (!/^\d{1,9}$/.test(raw)) throw new ValidationError([{ path: 'version', message: 'must be a whole number' }]);
    return this.queries.execute(new GetPolicyVersionQuery(p.tenant, Number(raw)));
  }

  @Post('rollback')
  @HttpCode(200)
  @Roles('admin')
  @ApiOperation({
    operationId: 'rollBackPolicy',
    summary: 'Roll the policy back to an earlier version',
    description:
      "Admins. Makes a new version whose document is the given version's (history is never rewritten), recorded as PolicyUpdated with `source: rollback` and `rolledBackFrom`. The document is checked as a new PUT would be. The version in force, or one with the same document, answers 409 already_in_force; an unknown version 404.",
  })
  @ApiBody({ type: RollbackPolicyRequest })
  @ApiOkResponse({ type: PolicyView, description: 'The new version in force' })
  @ApiResponse({
    status: 202,
    type: HeldForApprovalView,
    description:
      'Governance (`governance: {quorum}` in the policy in force): held for other admins as a pending change (/v1/changes); nothing changed yet',
  })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden', 'not_found')
  @ApiResponse({
    status: 409,
    description: 'The version is the one in force, or has its document (already_in_force)',
    content: {
      [PROBLEM_CONTENT_TYPE]: {
        schema: { $ref: getSchemaPath(ProblemView) },
        examples: {
          already_in_force: {
            summary: 'Nothing to roll back',
            value: problem(
              409,
              'already_in_force',
              'Policy version 3 is the version in force: there is nothing to roll back',
            ),
          },
        },
      },
    },
  })
  async rollBack(
    @CurrentPrincipal() p: Principal,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: FastifyReply,
  ) {
    const dto = parseBody(RollbackPolicyRequest, body);
    const { pendingChange, ...policy } = await this.commands.execute(
      new RollBackPolicyCommand(p.tenant, actorOf(p), dto.version, dto.reason),
    );
    if (pendingChange) return held(res, { pendingChange });
    return policy;
  }

  /**
   * Admins and auditors: it changes nothing and records nothing, and auditors already read every call it
   * would show. The registry, grants and conversations' users are read as they are now.
   */
  @Post('simulate')
  @HttpCode(200)
  @Roles('admin', 'auditor')
  @ApiOperation({
    operationId: 'simulatePolicy',
    summary: 'Simulate a candidate policy document',
    description:
      'Admins and auditors. Judges the given calls (by the policy in force and by the candidate), or the calls recorded since `since` or in the last `days` (default 7; the newest `limit`, at most 1000, with `truncated`), beside what they got. Tools, standing grants and users are read as they are now. Nothing is written: no version, no event, no grant used. An invalid document answers 400 as PUT does; so does a simulation that would match rules against commands and their parts more than 500,000 times (`validation_failed` on `calls`, or on `limit` for recorded calls).',
  })
  @ApiBody({ type: SimulatePolicyRequest })
  @ApiOkResponse({ type: PolicySimulationDto })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden')
  simulate(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    // The document is checked by the domain, as PUT checks it: only its presence and kind are checked here.
    const raw =
      body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
    const document = raw?.document;
    const dto = parseBody(
      SimulatePolicyRequest,
      raw && document !== null && typeof document === 'object' && !Array.isArray(document)
        ? { ...raw, document: {} }
        : body,
    );
    const faults = [
      ...(dto.calls && (dto.since !== undefined || dto.days !== undefined || dto.limit !== undefined)
        ? [{ path: 'calls', message: 'cannot be combined with since, days or limit' }]
        : []),
      ...(dto.since !== undefined && dto.days !== undefined
        ? [{ path: 'days', message: 'cannot be combined with since' }]
        : []),
    ];
    const since = dto.since === undefined ? undefined : parseSince(dto.since);
    if (since === null) faults.push({ path: 'since', message: 'must be an ISO 8601 date or date-time' });
    if (faults.length) throw new ValidationError(faults);
    const over = dto.calls
      ? {
          calls: dto.calls.map((c, i) => ({
            toolName: c.toolName,
            arguments: c.arguments,
            annotations: c.annotations && toolFlagsOf(c.annotations, `calls[${i}].annotations`),
            confidence: c.confidence,
            estimatedCost: c.estimatedCost,
            conversationId: c.conversationId,
          })),
        }
      : {
          since: since ?? undefined,
          days: dto.days ?? DEFAULT_SIMULATION_DAYS,
          limit: dto.limit ?? MAX_SIMULATED_CALLS,
        };
    return this.queries.execute(new SimulatePolicyQuery(p.tenant, document, over));
  }
}

/** A governed request held for other admins: 202 Accepted with the pending change (four eyes). */
export function held<T>(res: FastifyReply, body: T): T {
  res.status(202);
  return body;
}

function actorOf(p: Principal): Actor {
  return { id: p.id, kind: isAgent(p) ? 'agent' : 'person', via: 'api', name: p.name, roles: p.roles };
}

/** An ISO 8601 date or date-time; null when it is not one. */
function parseSince(v: string): Date | null {
  const d = new Date(v);
  return Number.isNaN(d.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(v) ? null : d;
}

/** YAML (Content-Type application/yaml) is parsed to the same document JSON would give. */
export function parseYamlBody(text: string): unknown {
  try {
    return parseYaml(text, { maxAliasCount: 50 });
  } catch (e) {
    throw new ValidationError([{ path: '', message: `not valid YAML: ${(e as Error).message.split('\n')[0]}` }]);
  }
}
