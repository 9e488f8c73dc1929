import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, getSchemaPath, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { packageVersion } from '../../infrastructure/package-info';
import { ProblemView } from '../api/dto/problem.dto';
import { JSON_VALUE } from '../api/dto/json-value';
import { POLICY_SCHEMA_PATH, policyOpenApiComponents } from '../api/policy-schema';
import { PROBLEM_CONTENT_TYPE, problem } from '../api/problem';

const DESCRIPTION = [
  "Approval service for AI-agent tool calls: an agent proposes tool calls, the tenant's policy lets each through, holds it for a person or denies it, people decide, and the agent claims the approved run once and reports its result.",
  '',
  'Every `/v1` route takes `Authorization: Bearer <JWT>` (claims `sub`, `roles`, `tenant`, `exp`). Errors are RFC 9457 problems (`application/problem+json`) with a stable `code`. Every answer carries `X-Request-Id` (yours, when you send one that matches `^[A-Za-z0-9_.:-]{1,128}$`).',
  '',
  `The contract in prose is docs/API.md. The policy document's JSON Schema is served at \`${POLICY_SCHEMA_PATH}\`.`,
].join('\n');

const TAGS: Array<[string, string]> = [
  ['identity', 'Who the caller is, as their token establishes them'],
  ['tools', "The tenant's tool registry: what each tool is, for the policy"],
  ['policy', "The tenant's policy document: levels, rules, approvers, timeouts"],
  ['conversations', 'Conversations of an agent with its end user, and the tool calls it proposes in them'],
  ['tool calls', 'Wait for a decision, decide, claim the approved run, report the result'],
  ['approvals', 'The inbox: what the caller may decide'],
  ['questions', 'Questions from agents to people: ask, wait for the answer, answer'],
  ['grants', 'Standing grants made by always_allow: list and revoke'],
  ['halt', 'The kill switch'],
  ['changes', 'Pending changes of the control plane (governance, four eyes): list, approve, reject'],
  ['audit', 'The hash-chained audit trail, its verification, metrics and gaps'],
  ['events', 'Live events (Server-Sent Events)'],
  ['webhooks', 'Outgoing webhooks, signed per Standard Webhooks'],
  ['receipts', 'Keys that check execution receipts and audit checkpoints'],
  ['health', 'Probes and metrics for operators'],
];

/**
 * What every route can answer, whatever it is, added to each operation as shared responses: Node refuses oversized
 * headers before any route runs (server.ts answers the problem itself), and a bug is a 500.
 */
const EVERY_ROUTE = [
  {
    name: 'HeadersTooLarge',
    description: 'The request line and headers exceed 16 KiB (headers_too_large)',
    example: {
      ...problem(431, 'headers_too_large', 'The request line and headers exceed 16 KiB'),
      title: 'Request Header Fields Too Large',
    },
  },
  {
    name: 'InternalError',
    description: 'A bug, logged with the request id (internal)',
    example: problem(500, 'internal', 'An unexpected error occurred; it has been logged.'),
  },
];

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/** The OpenAPI document at /openapi.json and its viewer at /docs. */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => createOpenApiDocument(app), {
    jsonDocumentUrl: 'openapi.json',
    raw: ['json'],
  });
}

export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    // 3.1: schemas are JSON Schema 2020-12, as the policy schema is, and null is a type (Nest converts `nullable`).
    .setOpenAPIVersion('3.1.0')
    .setTitle('Tollgate')
    .setDescription(DESCRIPTION)
    .setVersion(packageVersion())
    .setLicense('Apache-2.0', 'https://www.apache.org/licenses/LICENSE-2.0')
    // Relative: the document is right wherever the server is reached (a proxy, another port).
    .addServer('/', 'This server')
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: 'A JWT: HS256 with TOLLGATE_JWT_SECRET, or from your identity provider (TOLLGATE_JWKS_URL)',
    });
  for (const [name, description] of TAGS) builder.addTag(name, description);
  const doc = SwaggerModule.createDocument(app, builder.build(), {
    extraModels: [ProblemView],
    autoTagControllers: false,
  });
  return closeRequestBodies(withSharedParts(unwrapSoleAllOf(doc) as OpenAPIObject));
}

/**
 * Request bodies refuse unknown fields at every level but inside free JSON (`arguments`, `metadata`, `output`,
 * which say `additionalProperties: true`): every object schema a body refers to says so too.
 */
function closeRequestBodies(doc: OpenAPIObject): OpenAPIObject {
  const schemas = (doc.components?.schemas ?? {}) as Record<string, Record<string, unknown>>;
  const reached = new Set<string>();
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (v === null || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v)) {
      const name = k === '$ref' && typeof x === 'string' ? x.replace('#/components/schemas/', '') : undefined;
      if (name !== undefined && !reached.has(name)) {
        reached.add(name);
        visit(schemas[name]);
      } else visit(x);
    }
  };
  for (const item of Object.values(doc.paths)) for (const method of METHODS) visit(item[method]?.requestBody);
  for (const name of reached) {
    const schema = schemas[name];
    if (schema?.properties && schema.additionalProperties === undefined) schema.additionalProperties = false;
  }
  return doc;
}

/**
 * Nest wraps each referenced enum in an `allOf` of one member and nothing beside it; the `$ref` alone says the
 * same, and linters (Redocly's no-illogical-composition-keywords) and generators read it more simply.
 */
function unwrapSoleAllOf(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(unwrapSoleAllOf);
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  if (Object.keys(o).length === 1 && Array.isArray(o.allOf) && o.allOf.length === 1) return unwrapSoleAllOf(o.allOf[0]);
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, unwrapSoleAllOf(x)]));
}

/** The policy's schemas (one source with /schemas/policy.json), and the responses every route can give. */
function withSharedParts(doc: OpenAPIObject): OpenAPIObject {
  const components = (doc.components ??= {});
  components.schemas = { ...components.schemas, ...policyOpenApiComponents(), [JSON_VALUE.name]: JSON_VALUE.schema };
  components.responses ??= {};
  for (const { name, description, example } of EVERY_ROUTE) {
    components.responses[name] = {
      description,
      content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: getSchemaPath(ProblemView) }, example } },
    };
  }
  for (const item of Object.values(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      for (const { name, example } of EVERY_ROUTE)
        op.responses[example.status] ??= { $ref: `#/components/responses/${name}` };
    }
  }
  return doc;
}
