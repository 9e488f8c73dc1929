import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { execFile } from 'node:child_process';
import { createECDH, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as ts from 'typescript';
import { policyOpenApiComponents } from '../../src/adapters/api/policy-schema';

import { startTestServer, TestServer } from '../support/server';
import { SoftAuthenticator } from '../support/soft-authenticator';
import { until } from '../support/wait';

/**
 * /openapi.json is the contract code generators build clients from: Redocly-clean, every operation named and
 * typed, and true to the server, whose real answers (successes and problems alike) are checked against the
 * schemas it declares for them.
 */
const ROOT = join(__dirname, '..', '..');
const REDOCLY_ENV = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
/** The routes anyone may call: probes, metrics, and the public documents. */
const PUBLIC = ['getLiveness', 'getReadiness', 'getMetrics', 'getJwks', 'getPolicySchema'];

type Doc = any;
interface Operation {
  method: (typeof METHODS)[number];
  path: string;
  op: any;
}

function operations(doc: Doc): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ method, path, op: item[method] })),
  );
}

/** A response object, its `$ref` (to components.responses) followed. */
function response(doc: Doc, r: any): any {
  return r?.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r;
}

interface Reply {
  status: number;
  headers: Headers;
  /** Parsed for JSON media types (`application/json`, `…+json`), else the text. */
  body: any;
}

let server: TestServer;
let doc: Doc;
let work: string;

beforeAll(async () => {
  server = await startTestServer({
    outboxPollMs: 50,
    webhooks: { retryBaseMs: 100, maxAttempts: 2, timeoutMs: 500, allowPrivate: ['127.0.0.0/8'] },
    push: { subject: 'mailto:ops@example.com' },
  });
  const res = await fetch(`${server.url}/openapi.json`);
  expect(res.status).toBe(200);
  doc = await res.json();
  work = mkdtempSync(join(tmpdir(), 'tollgate-openapi-'));
  writeFileSync(join(work, 'openapi.json'), JSON.stringify(doc, null, 2));
});

afterAll(async () => {
  await server?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the OpenAPI document', () => {
  it("has no error or warning under Redocly's recommended rules (redocly.yaml), in openapi-core and in the CLI", async () => {
    const { loadConfig, lintFromString } = require('@redocly/openapi-core');
    const config = await loadConfig({ configPath: join(ROOT, 'redocly.yaml') });
    const problems = await lintFromString({
      source: JSON.stringify(doc),
      absoluteRef: join(work, 'openapi.json'),
      config,
    });
    expect(problems.map((p: any) => `${p.severity} ${p.ruleId} at ${p.location?.[0]?.pointer}: ${p.message}`)).toEqual(
      [],
    );

    // The CLI a person runs (npx redocly lint), whose recommended rules are newer than openapi-core's.
    const cli = join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [cli, 'lint', join(work, 'openapi.json'), '--config', join(ROOT, 'redocly.yaml'), '--format=json'],
      { env: REDOCLY_ENV },
    ).catch((e) => e);
    const report = JSON.parse(stdout);
    expect(
      report.problems.map((p: any) => `${p.severity} ${p.ruleId} at ${p.location?.[0]?.pointer}: ${p.message}`),
    ).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it("says which Tollgate it describes, and where: the package's version, this server", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(pkg.version);
    expect(doc.info.license).toEqual({ name: pkg.license, url: expect.stringMatching(/^https:\/\//) });
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
  });

  it('is browsable at /docs', async () => {
    const res = await fetch(`${server.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toContain('swagger-ui');
  });

  it('names every operation for generated clients: a unique camelCase operationId, a summary, a known tag', () => {
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThanOrEqual(35);
    const ids = ops.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const tags = doc.tags.map((t: any) => t.name);
    for (const { method, path, op } of ops) {
      const where = `${method.toUpperCase()} ${path}`;
      expect({ where, id: op.operationId }).toEqual({ where, id: expect.stringMatching(/^[a-z][A-Za-z0-9]*$/) });
      expect({ where, summary: typeof op.summary === 'string' && op.summary.length > 5 }).toEqual({
        where,
        summary: true,
      });
      expect({ where, tags: op.tags.length > 0 && op.tags.every((t: string) => tags.includes(t)) }).toEqual({
        where,
        tags: true,
      });
    }
  });

  it('leaves out what is not the API: the web inbox and Slack callbacks', () => {
    const paths = Object.keys(doc.paths);
    expect(
      paths.filter((p) => p === '/' || p.startsWith('/ui/') || p.startsWith('/assets/') || p.includes('slack')),
    ).toEqual([]);
  });

  it('declares every error an operation answers as an RFC 9457 problem', () => {
    for (const { method, path, op } of operations(doc)) {
      const where = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(op.responses);
      expect({ where, success: statuses.filter((s) => /^2/.test(s)).length > 0 }).toEqual({ where, success: true });
      expect({ where, fourXX: statuses.filter((s) => /^4/.test(s)).length > 0 }).toEqual({ where, fourXX: true });
      for (const status of statuses.filter((s) => /^[45]/.test(s))) {
        if (op.operationId === 'getReadiness' && status === '503') continue; // terminus' report of the checks, not a problem
        const content = response(doc, op.responses[status]).content;
        expect({
          where,
          status,
          types: Object.keys(content),
          schema: content['application/problem+json'].schema,
        }).toEqual({
          where,
          status,
          types: ['application/problem+json'],
          schema: { $ref: '#/components/schemas/Problem' },
        });
      }
    }
    expect(doc.components.schemas.Problem.required).toEqual(['type', 'title', 'status', 'detail', 'code']);
  });

  it('declares each parameter once, and no header a client must send', () => {
    for (const { method, path, op } of operations(doc)) {
      const params = (op.parameters ?? []) as any[];
      const keys = params.map((p) => `${p.in}:${p.name.toLowerCase()}`);
      expect({ where: `${method} ${path}`, keys: [...new Set(keys)] }).toEqual({ where: `${method} ${path}`, keys });
      for (const p of params)
        expect({ where: `${method} ${path} ${p.name}`, described: !!p.description }).toEqual({
          where: `${method} ${path} ${p.name}`,
          described: true,
        });
      expect(params.filter((p) => p.in === 'header' && p.required)).toEqual([]);
    }
    const decide = doc.paths['/v1/tool-calls/{id}/decision'].post.parameters.filter((p: any) => p.in === 'header');
    expect(decide).toEqual([
      expect.objectContaining({
        name: 'x-tollgate-channel',
        required: false,
        schema: expect.objectContaining({ enum: ['web', 'cli', 'api', 'mcp'] }),
      }),
    ]);
  });

  it('says that request bodies refuse unknown fields, but inside free JSON', () => {
    for (const { method, path, op } of operations(doc)) {
      const ref = op.requestBody?.content['application/json']?.schema?.$ref;
      if (!ref) continue;
      const schema = doc.components.schemas[ref.split('/').pop()];
      expect({ where: `${method} ${path}`, additionalProperties: schema.additionalProperties }).toEqual({
        where: `${method} ${path}`,
        additionalProperties: false,
      });
    }
    expect(doc.components.schemas.ProposedToolCall.properties.arguments.additionalProperties).toBe(true);
    expect(doc.components.schemas.Display.additionalProperties).toBe(false);
  });

  it('takes a policy as JSON or YAML, described by the same schema /schemas/policy.json serves', () => {
    const body = doc.paths['/v1/policy'].put.requestBody;
    expect(body.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PolicyDocument' });
    expect(body.content['application/yaml'].schema.type).toBe('string');
    expect(body.description).toContain('/schemas/policy.json');
    for (const [name, schema] of Object.entries(policyOpenApiComponents()))
      expect(doc.components.schemas[name]).toEqual(schema);
  });

  it('asks a bearer token on every route but the public ones, as the server does', async () => {
    for (const { method, path, op } of operations(doc)) {
      const where = `${method.toUpperCase()} ${path}`;
      const isPublic = PUBLIC.includes(op.operationId);
      expect({ where, security: op.security }).toEqual({ where, security: isPublic ? [] : [{ bearer: [] }] });
      const res = await fetch(server.url + path.replace(/\{[^}]+\}/g, 'x'), { method: method.toUpperCase() });
      const text = await res.text();
      if (isPublic) expect({ where, status: res.status }).not.toEqual({ where, status: 401 });
      else {
        expect({ where, status: res.status }).toEqual({ where, status: 401 });
        expectDeclared({ status: 401, headers: res.headers, body: JSON.parse(text) }, method, path);
      }
    }
  });
});

describe('types generated by openapi-typescript', () => {
  it('exist for every success response and compile', async () => {
    // The SDK's generated types (packages/sdk/src/generated/api.ts), which its drift test keeps equal to what
    // this document generates.
    writeFileSync(join(work, 'api.ts'), readFileSync(join(ROOT, 'packages', 'sdk', 'src', 'generated', 'api.ts')));

    // One assertion per operation, status and media type: the generated body type is neither never nor unknown.
    const checks: string[] = [];
    for (const { op } of operations(doc)) {
      for (const [status, r] of Object.entries<any>(op.responses).filter(([s]) => /^2/.test(s))) {
        const content = response(doc, r).content;
        if (!content) {
          // The successes without a body.
          expect({ op: op.operationId, status }).toEqual({
            op: expect.stringMatching(
              /^(deleteWebhook|removePasskey|revokePersonPasskey|deletePushSubscription|endDelegation)$/,
            ),
            status: '204',
          });
          continue;
        }
        for (const type of Object.keys(content)) {
          checks.push(
            `export const ${op.operationId}_${status}_${checks.length}: Typed<operations[${JSON.stringify(op.operationId)}]['responses'][${status}]['content'][${JSON.stringify(type)}]> = true;`,
          );
        }
      }
    }
    expect(checks.length).toBeGreaterThanOrEqual(36);
    writeFileSync(
      join(work, 'checks.ts'),
      [
        "import type { components, operations, paths } from './api';",
        '/** true only for a real type: never and unknown (or any) are false. */',
        'type Typed<T> = [T] extends [never] ? false : unknown extends T ? false : true;',
        ...checks,
        // A few shapes a client relies on, spelled out.
        "export const call: components['schemas']['ToolCall']['status'] = 'pending';",
        "export const nullableUser: components['schemas']['Conversation']['user'] = null;",
        "export const channel: NonNullable<operations['decideToolCall']['parameters']['header']>['x-tollgate-channel'] = undefined;",
        "export const policy: paths['/v1/policy']['put']['requestBody']['content']['application/json'] = { rules: [{ match: 'get_*', level: 'automatic' }] };",
      ].join('\n'),
    );
    const program = ts.createProgram([join(work, 'checks.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      skipLibCheck: true,
      types: [],
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
  });
});

describe('the gRPC messages (proto/tollgate/v1/tollgate.proto)', () => {
  it('carry the members of the REST shape of the same name, no more and no fewer', () => {
    // A member added to a view and its Swagger class, but not to the proto (and its mapping), fails here.
    const protobuf = require('protobufjs');
    const pkg = protobuf.loadSync(join(ROOT, 'proto', 'tollgate', 'v1', 'tollgate.proto')).lookup('tollgate.v1');
    /** What a request message carries besides its REST body: the path parameters. */
    const PATH: Record<string, string[]> = {
      ProposeToolCallsRequest: ['conversationId'],
      RegisterToolRequest: ['name'],
      AskQuestionRequest: ['conversationId'],
      AnswerQuestionRequest: ['id'],
    };
    const compared: string[] = [];
    for (const [name, type] of Object.entries<any>(pkg.nested)) {
      const schema = doc.components.schemas[name];
      if (!(type instanceof protobuf.Type) || !schema?.properties) continue;
      compared.push(name);
      // gRPC's Approval nests the call ({toolCall, conversation}); REST's spreads it beside the conversation.
      const fields =
        name === 'Approval'
          ? [...Object.keys(pkg.nested.ToolCall.fields), 'conversation']
          : Object.keys(type.fields).filter((f) => !PATH[name]?.includes(f));
      expect({ name, fields: fields.sort() }).toEqual({ name, fields: Object.keys(schema.properties).sort() });
    }
    expect(compared).toEqual(expect.arrayContaining(['ToolCall', 'ToolCallPolicy', 'ToolCallDecision', 'Question']));
  });
});

/* Real answers against the declared schemas. */

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const compiled = new Map<string, ValidateFunction>();
/** Operations whose success answer has been checked. */
const checkedSuccess = new Set<string>();

/**
 * The declared schemas, closed: an object schema that lists its properties answers nothing else, so a member
 * the server adds without declaring it fails here (clients are still free to ignore extra members).
 */
function closed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(closed);
  if (v === null || typeof v !== 'object') return v;
  const o = Object.fromEntries(
    Object.entries(v).map(([k, x]) => [k, k === 'examples' || k === 'example' ? x : closed(x)]),
  );
  if (o.properties && o.additionalProperties === undefined) o.additionalProperties = false;
  return o;
}

function validatorFor(schema: unknown): ValidateFunction {
  if (!ajv.getSchema('openapi'))
    ajv.addSchema({ $id: 'openapi', components: { schemas: closed(doc.components.schemas) } });
  const text = JSON.stringify(closed(schema)).replace(/"#\/components\//g, '"openapi#/components/');
  let v = compiled.get(text);
  if (!v) compiled.set(text, (v = ajv.compile(JSON.parse(text))));
  return v;
}

/** The answer's status and media type are declared for the operation, and its body fits their schema. */
function expectDeclared(reply: Pick<Reply, 'status' | 'headers' | 'body'>, method: string, path: string): void {
  const op = doc.paths[path]?.[method];
  if (!op) throw new Error(`${method} ${path} is not in the document`);
  const where = `${op.operationId} → ${reply.status}`;
  const declared = op.responses[String(reply.status)];
  expect({ where, declared: !!declared }).toEqual({ where, declared: true });
  const content = response(doc, declared).content;
  if (reply.status === 204) {
    expect({ where, content, body: reply.body }).toEqual({ where, content: undefined, body: '' });
  } else {
    const type = (reply.headers.get('content-type') ?? '').split(';')[0].trim();
    expect({ where, type, declared: Object.keys(content).includes(type) }).toEqual({ where, type, declared: true });
    const validate = validatorFor(content[type].schema);
    const ok = validate(reply.body);
    expect({ where, errors: ok ? null : validate.errors, body: ok ? null : reply.body }).toEqual({
      where,
      errors: null,
      body: null,
    });
  }
  if (reply.status < 300) checkedSuccess.add(op.operationId);
}

describe('real answers', () => {
  let admin: string;
  let agent: string;
  let approver: string;
  let auditor: string;

  beforeAll(async () => {
    admin = await server.token('ann', ['admin'], { name: 'Ann' });
    agent = await server.token('support-bot', ['agent']);
    approver = await server.token('bob', ['approver']);
    auditor = await server.token('audrey', ['auditor']);
  });

  /** Calls and checks the answer against the document; `template` is the document's path, `args` fill it. */
  async function call(
    method: string,
    template: string,
    opts: {
      token?: string;
      body?: unknown;
      raw?: string;
      headers?: Record<string, string>;
      query?: string;
      args?: string[];
    } = {},
  ): Promise<Reply> {
    const args = [...(opts.args ?? [])];
    const url =
      template.replace(/\{[^}]+\}/g, () => encodeURIComponent(args.shift()!)) + (opts.query ? `?${opts.query}` : '');
    const headers: Record<string, string> = {
      ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
      ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...opts.headers,
    };
    const res = await fetch(server.url + url, {
      method: method.toUpperCase(),
      headers,
      body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
    });
    const text = await res.text();
    const json = /^application\/([\w.-]+\+)?json\b/.test(res.headers.get('content-type') ?? '');
    const reply = { status: res.status, headers: res.headers, body: json && text ? JSON.parse(text) : text };
    expectDeclared(reply, method, template);
    return reply;
  }

  it('match their schemas along the whole life of a tool call', async () => {
    // Tools and policy
    expect(
      (
        await call('put', '/v1/tools/{name}', {
          token: agent,
          args: ['delete_source'],
          body: { description: 'Delete a knowledge source', destructive: true },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await call('put', '/v1/tools/{name}', {
          token: agent,
          args: ['delete_source'],
          body: { description: 'Delete a knowledge source', destructive: true },
        })
      ).status,
    ).toBe(200);
    await call('put', '/v1/tools/{name}', { token: admin, args: ['get_source'], body: { isReadOnly: true } });
    expect((await call('get', '/v1/tools', { token: approver, query: 'limit=1' })).body.nextCursor).toEqual(
      expect.any(String),
    );
    await call('get', '/v1/tools/{name}', { token: auditor, args: ['delete_source'] });
    expect((await call('get', '/v1/tools/{name}', { token: auditor, args: ['nope'] })).status).toBe(404);
    expect((await call('get', '/v1/policy', { token: auditor })).body.version).toBe(0);
    expect(
      (await call('put', '/v1/policy', { token: admin, body: { rules: [{ match: 'get_*', level: 'automatic' }] } }))
        .status,
    ).toBe(200);
    const yaml =
      'defaults:\n  timeoutSeconds: 600\nrules:\n  - match: "shell(cmd=rm *)"\n    level: deny\n  - match: delete_source\n    level: confirm\n    approvers: [requester, approver, admin]\n';
    expect(
      (await call('put', '/v1/policy', { token: admin, raw: yaml, headers: { 'content-type': 'application/yaml' } }))
        .body.version,
    ).toBe(2);
    expect(
      (await call('put', '/v1/policy', { token: admin, body: { rules: [{ match: 'x', level: 'sometimes' }] } })).body
        .errors,
    ).toHaveLength(1);
    expect((await call('put', '/v1/policy', { token: approver, body: { rules: [] } })).status).toBe(403);
    expect(
      (await call('put', '/v1/policy', { token: admin, raw: 'rules: []', headers: { 'content-type': 'text/plain' } }))
        .status,
    ).toBe(415);

    // Conversations and a step of three calls: one runs, one waits, one is denied.
    expect(
      (
        await call('post', '/v1/conversations', {
          token: agent,
          body: { id: 'conv-1', user: { id: 'carol', roles: ['admin'], name: 'Carol' }, title: 'Tidy up' },
        })
      ).status,
    ).toBe(201);
    expect(
      (await call('post', '/v1/conversations', { token: agent, body: { id: 'conv-1', user: { id: 'carol' } } })).status,
    ).toBe(200);
    expect((await call('post', '/v1/conversations', { token: agent, body: { id: 'conv-2' } })).body.user).toBeNull();
    expect(
      (
        await call('post', '/v1/conversations', {
          token: await server.token('other-bot', ['agent']),
          body: { id: 'conv-1' },
        })
      ).status,
    ).toBe(409);
    expect((await call('post', '/v1/conversations', { token: agent, body: { titel: 'typo' } })).status).toBe(400);
    expect((await call('post', '/v1/conversations', { token: admin, body: {} })).status).toBe(403);
    const step = {
      toolCalls: [
        { id: 'call_1', toolName: 'get_source', arguments: { id: 'src_2' } },
        {
          id: 'call_2',
          toolName: 'delete_source',
          arguments: { id: 'src_2' },
          reason: 'asked',
          confidence: 0.9,
          estimatedCost: 0,
          display: { title: 'Delete', summary: 'Delete src_2', fields: [{ label: 'Objects', value: '1,204' }] },
        },
        { id: 'call_3', toolName: 'shell', arguments: { cmd: 'rm -rf /' }, annotations: { destructive: true } },
      ],
    };
    const proposed = await call('post', '/v1/conversations/{id}/tool-calls', {
      token: agent,
      args: ['conv-1'],
      body: step,
    });
    expect(proposed.body.toolCalls.map((c: any) => c.status)).toEqual(['approved', 'pending', 'rejected']);
    const [auto, held] = proposed.body.toolCalls;
    expect(
      (await call('post', '/v1/conversations/{id}/tool-calls', { token: agent, args: ['conv-1'], body: step })).status,
    ).toBe(200);
    expect(
      (
        await call('post', '/v1/conversations/{id}/tool-calls', {
          token: agent,
          args: ['conv-1'],
          body: { toolCalls: [{ toolName: 'get_source', arguments: {} }] },
        })
      ).body.code,
    ).toBe('conversation_blocked');
    expect(
      (await call('post', '/v1/conversations/{id}/tool-calls', { token: agent, args: ['nope'], body: step })).status,
    ).toBe(404);
    expect(
      (
        await call('post', '/v1/conversations/{id}/tool-calls', {
          token: agent,
          args: ['conv-1'],
          body: { toolCalls: [] },
        })
      ).status,
    ).toBe(400);

    // Waiting, the inbox, deciding
    expect(
      (await call('get', '/v1/tool-calls/{id}', { token: agent, args: [held.id], query: 'wait=0' })).body.approval,
    ).toBeDefined();
    expect(
      (await call('get', '/v1/tool-calls/{id}', { token: agent, args: [held.id], query: 'wait=soon' })).status,
    ).toBe(400);
    expect((await call('get', '/v1/tool-calls/{id}', { token: agent, args: ['tc_nope'] })).status).toBe(404);
    expect((await call('get', '/v1/approvals', { token: approver })).body.items.map((i: any) => i.id)).toEqual([
      held.id,
    ]);
    await call('get', '/v1/approvals', { token: admin, query: 'status=rejected' });
    expect((await call('get', '/v1/approvals', { token: agent })).status).toBe(403);
    expect(
      (
        await call('post', '/v1/tool-calls/{id}/decision', {
          token: agent,
          args: [held.id],
          body: { decision: 'approve' },
        })
      ).status,
    ).toBe(403);
    const decided = await call('post', '/v1/tool-calls/{id}/decision', {
      token: approver,
      args: [held.id],
      body: { decision: 'approve', reason: 'ok', arguments: { id: 'src_2', dryRun: true } },
      headers: { 'x-tollgate-channel': 'cli' },
    });
    expect(decided.body.decision).toMatchObject({ outcome: 'approved', by: { id: 'bob', via: 'cli' } });
    expect(
      (
        await call('post', '/v1/tool-calls/{id}/decision', {
          token: admin,
          args: [held.id],
          body: { decision: 'reject' },
        })
      ).body,
    ).toMatchObject({ code: 'already_decided', toolCallStatus: 'approved' });
    expect(
      (
        await call('post', '/v1/tool-calls/{id}/decision', {
          token: approver,
          args: [held.id],
          body: { decision: 'approve' },
          headers: { 'x-tollgate-channel': 'slack' },
        })
      ).status,
    ).toBe(400);

    // Claim and result
    expect(
      (
        await call('post', '/v1/tool-calls/{id}/result', {
          token: agent,
          args: [held.id],
          body: { outcome: 'succeeded' },
        })
      ).body.code,
    ).toBe('not_executed');
    const claim = await call('post', '/v1/tool-calls/{id}/execution', { token: agent, args: [held.id] });
    expect(claim.body.arguments).toEqual({ id: 'src_2', dryRun: true });
    expect((await call('post', '/v1/tool-calls/{id}/execution', { token: agent, args: [held.id] })).body.code).toBe(
      'already_executed',
    );
    expect((await call('post', '/v1/tool-calls/{id}/execution', { token: admin, args: [auto.id] })).status).toBe(403);
    expect(
      (
        await call('post', '/v1/tool-calls/{id}/result', {
          token: agent,
          args: [held.id],
          body: { outcome: 'succeeded', output: 'any JSON: a string too' },
        })
      ).body.status,
    ).toBe('completed');
    expect(
      (
        await call('post', '/v1/tool-calls/{id}/result', {
          token: agent,
          args: [held.id],
          body: { outcome: 'failed', error: 'again' },
        })
      ).body.code,
    ).toBe('already_completed');
    expect(
      (
        await call('post', '/v1/tool-calls/{id}/result', {
          token: agent,
          args: [auto.id],
          body: { outcome: 'succeeded', output: 'x'.repeat(70_000) },
        })
      ).status,
    ).toBe(413);
    await call('post', '/v1/tool-calls/{id}/execution', { token: agent, args: [auto.id] });
    await call('post', '/v1/tool-calls/{id}/result', {
      token: agent,
      args: [auto.id],
      body: { outcome: 'failed', error: 'the source was gone' },
    });
    const conversation = await call('get', '/v1/conversations/{id}', { token: approver, args: ['conv-1'] });
    expect(conversation.body.toolCalls.map((c: any) => c.status).sort()).toEqual([
      'completed',
      'completed',
      'rejected',
    ]);
    expect(
      (await call('get', '/v1/conversations', { token: auditor, query: 'status=active&limit=1' })).body.items,
    ).toHaveLength(1);
    expect((await call('get', '/v1/conversations', { token: auditor, query: 'status=lost' })).status).toBe(400);

    // A grant beyond the approver, then a halt that cancels a held call, and resume.
    const second = await call('post', '/v1/conversations/{id}/tool-calls', {
      token: agent,
      args: ['conv-2'],
      body: { toolCalls: [{ toolName: 'delete_source', arguments: { id: 'src_3' } }] },
    });
    const pending = second.body.toolCalls[0];
    expect(
      (
        await call('post', '/v1/tool-calls/{id}/decision', {
          token: approver,
          args: [pending.id],
          body: { decision: 'always_allow', scope: 'tenant' },
        })
      ).body,
    ).toMatchObject({ code: 'forbidden', requestedScope: 'tenant' });
    expect(
      (await call('post', '/v1/halt', { token: admin, body: { scope: 'conversation', id: 'nope', reason: 'x' } }))
        .status,
    ).toBe(404);
    const halt = await call('post', '/v1/halt', {
      token: admin,
      body: { scope: 'tenant', reason: 'incident drill' },
      headers: { 'x-tollgate-channel': 'cli' },
    });
    expect(halt.body).toMatchObject({ halted: true, changed: true, cancelledToolCallIds: [pending.id] });
    expect((await call('get', '/v1/status', { token: auditor })).body.halted).toBe(true);
    expect(
      (await call('get', '/v1/tool-calls/{id}', { token: auditor, args: [pending.id] })).body.cancellation,
    ).toMatchObject({ reason: 'incident drill' });
    expect(
      (
        await call('post', '/v1/conversations/{id}/tool-calls', {
          token: agent,
          args: ['conv-2'],
          body: { toolCalls: [{ toolName: 'get_source', arguments: {} }] },
        })
      ).body,
    ).toMatchObject({ code: 'halted', scope: 'tenant' });
    expect((await call('post', '/v1/halt', { token: approver, body: { scope: 'tenant', reason: 'x' } })).status).toBe(
      403,
    );
    expect((await call('post', '/v1/resume', { token: admin, body: { scope: 'tenant' } })).body).toEqual({
      scope: 'tenant',
      id: null,
      halted: false,
      changed: true,
    });
    expect((await call('post', '/v1/resume', { token: admin, body: { scope: 'tenant', extra: 1 } })).status).toBe(400);
    expect((await call('get', '/v1/status', { token: agent })).status).toBe(403);
  });

  it('match their schemas in the audit trail, its files and its live stream', async () => {
    const events = await call('get', '/v1/audit/events', {
      token: auditor,
      query: 'limit=5&type=ToolCallApproved,ToolCallProposed',
    });
    expect(events.body.events.length).toBeGreaterThan(0);
    expect((await call('get', '/v1/audit/events', { token: auditor, query: 'type=Bogus' })).status).toBe(400);
    expect((await call('get', '/v1/audit/events', { token: approver })).status).toBe(403);
    const ndjson = await call('get', '/v1/audit/export', { token: auditor, query: 'conversationId=conv-1' });
    const lines = (ndjson.body as string)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines)
      expect({ ok: validatorFor({ $ref: '#/components/schemas/AuditEvent' })(line), line }).toEqual({ ok: true, line });
    expect((await call('get', '/v1/audit/export', { token: admin, query: 'format=csv' })).body).toMatch(
      /^seq,id,type,/,
    );
    expect((await call('get', '/v1/audit/verify', { token: auditor })).body).toEqual({
      ok: true,
      checked: expect.any(Number),
    });
    const jws = (await call('get', '/v1/audit/checkpoint', { token: auditor })).body as string;
    const checkpoint = await call('get', '/v1/audit/checkpoint', {
      token: auditor,
      headers: { accept: 'application/json' },
    });
    expect(checkpoint.body.jws.split('.')).toHaveLength(3);
    expect(
      (await call('get', '/v1/audit/verify', { token: auditor, query: `checkpoint=${jws}` })).body.checkpoint,
    ).toMatchObject({ seq: expect.any(Number), kid: expect.any(String) });
    expect((await call('get', '/v1/audit/verify', { token: auditor, query: 'checkpoint=nonsense' })).status).toBe(400);
    expect(
      (await call('get', '/v1/audit/metrics', { token: auditor, query: 'from=2020-01-01' })).body.approvedCount,
    ).toBe(1);
    expect((await call('get', '/v1/audit/gaps', { token: admin })).body.findings).toEqual(expect.any(Array));
    expect((await call('get', '/v1/audit/reviewers', { token: auditor })).body.reviewers).toEqual(expect.any(Array));
    expect((await call('get', '/v1/audit/gaps', { token: admin, query: 'from=yesterday' })).status).toBe(400);
    expect(
      (
        await call('post', '/v1/audit/purge', {
          token: admin,
          body: { before: '2001-01-01T00:00:00Z', reason: 'retention' },
        })
      ).body,
    ).toEqual({ before: '2001-01-01T00:00:00.000Z', purgedCount: 0 });
    expect(
      (
        await call('post', '/v1/audit/purge', {
          token: admin,
          body: { before: new Date().toISOString(), reason: 'too soon' },
        })
      ).status,
    ).toBe(400);
    expect(
      (await call('post', '/v1/audit/purge', { token: auditor, body: { before: '2001-01-01T00:00:00Z', reason: 'x' } }))
        .status,
    ).toBe(403);

    // The stream, from the first event: its first frame's data is an AuditEvent.
    const abort = new AbortController();
    const res = await fetch(`${server.url}/v1/events/stream?lastEventId=0`, {
      headers: { authorization: `Bearer ${auditor}` },
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    let text = '';
    while (!/\ndata: .*\n/.test(text)) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`the stream ended before an event: ${text}`);
      text += new TextDecoder().decode(value);
    }
    abort.abort();
    expectDeclared({ status: res.status, headers: res.headers, body: text }, 'get', '/v1/events/stream');
    expect(validatorFor({ $ref: '#/components/schemas/AuditEvent' })(JSON.parse(/\ndata: (.*)\n/.exec(text)![1]))).toBe(
      true,
    );
    expect(
      (await call('get', '/v1/events/stream', { token: auditor, headers: { 'last-event-id': 'yesterday' } })).status,
    ).toBe(400);
  });

  it('match their schemas for webhooks and their deliveries', async () => {
    // Port 9 (discard) on loopback refuses the connection: each delivery records a failed attempt.
    const created = await call('post', '/v1/webhooks', {
      token: admin,
      body: { url: 'http://127.0.0.1:9/hook', events: ['*'], description: 'nowhere' },
    });
    const id = created.body.id;
    expect(created.body.secret).toMatch(/^whsec_/);
    expect((await call('post', '/v1/webhooks', { token: admin, body: { url: 'ftp://x', events: ['*'] } })).status).toBe(
      400,
    );
    expect(
      (await call('post', '/v1/webhooks', { token: approver, body: { url: 'http://127.0.0.1:9/hook', events: ['*'] } }))
        .status,
    ).toBe(403);
    await call('get', '/v1/webhooks', { token: admin });
    expect((await call('get', '/v1/webhooks/{id}', { token: admin, args: [id] })).body).not.toHaveProperty('secret');
    expect((await call('get', '/v1/webhooks/{id}', { token: approver, args: [id] })).status).toBe(403);
    await call('put', '/v1/tools/{name}', { token: admin, args: ['ping'], body: {} }); // an event to deliver
    await until(
      async () =>
        (await call('get', '/v1/webhooks/{id}/deliveries', { token: admin, args: [id] })).body.items.some(
          (d: any) => d.attempts.length > 0,
        ),
      10_000,
      'a delivery attempt',
    );
    expect((await call('delete', '/v1/webhooks/{id}', { token: admin, args: [id] })).status).toBe(204);
    expect((await call('get', '/v1/webhooks/{id}', { token: admin, args: [id] })).status).toBe(404);
    expect((await call('get', '/v1/webhooks/{id}/deliveries', { token: admin, args: [id] })).status).toBe(404);
  });

  it('match their schemas for standing grants: list, filter, revoke', async () => {
    const held = await call('post', '/v1/conversations/{id}/tool-calls', {
      token: agent,
      args: ['conv-grants'],
      body: { toolCalls: [{ toolName: 'delete_source', arguments: { id: 'src_9' } }] },
    });
    expect(held.status).toBe(404); // no such conversation yet
    await call('post', '/v1/conversations', { token: agent, body: { id: 'conv-grants' } });
    const proposed = await call('post', '/v1/conversations/{id}/tool-calls', {
      token: agent,
      args: ['conv-grants'],
      body: { toolCalls: [{ toolName: 'delete_source', arguments: { id: 'src_9' } }] },
    });
    const body = { decision: 'always_allow', scope: 'conversation', args: { id: 'src_*' }, expiresIn: 3600 };
    expect(
      (
        await call('post', '/v1/tool-calls/{id}/decision', {
          token: approver,
          args: [proposed.body.toolCalls[0].id],
          body,
        })
      ).body.status,
    ).toBe('approved');
    const listed = await call('get', '/v1/grants', {
      token: auditor,
      query: 'tool=delete_source&scope=conversation&status=active&limit=1',
    });
    expect(listed.body.items).toHaveLength(1);
    expect((await call('get', '/v1/grants', { token: auditor, query: 'status=never' })).status).toBe(400);
    expect((await call('get', '/v1/grants', { token: agent })).status).toBe(403);
    const id = listed.body.items[0].id;
    expect(
      (await call('delete', '/v1/grants/{id}', { token: approver, args: [id], body: { reason: 'done' } })).body.status,
    ).toBe('revoked');
    expect((await call('delete', '/v1/grants/{id}', { token: admin, args: ['grant_nope'] })).status).toBe(404);
    expect((await call('delete', '/v1/grants/{id}', { token: admin, args: [id], body: { reasons: 'x' } })).status).toBe(
      400,
    );
    expect((await call('delete', '/v1/grants/{id}', { token: auditor, args: [id] })).status).toBe(403);
  });

  it('match their schemas for questions: ask, wait, answer, list', async () => {
    await call('post', '/v1/conversations', { token: agent, body: { id: 'conv-questions', user: { id: 'ann' } } });
    const asked = await call('post', '/v1/conversations/{id}/questions', {
      token: agent,
      args: ['conv-questions'],
      body: { id: 'ask_1', text: 'EU or US?', choices: ['EU', 'US'], timeoutSeconds: 600 },
    });
    expect(asked.status).toBe(201);
    expect(
      (
        await call('post', '/v1/conversations/{id}/questions', {
          token: agent,
          args: ['conv-questions'],
          body: { id: 'ask_1', text: 'EU or US?', choices: ['EU', 'US'], timeoutSeconds: 600 },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await call('post', '/v1/conversations/{id}/questions', {
          token: agent,
          args: ['conv-questions'],
          body: { id: 'ask_1', text: 'EU or APAC?' },
        })
      ).status,
    ).toBe(409);
    expect(
      (
        await call('post', '/v1/conversations/{id}/questions', {
          token: agent,
          args: ['conv-questions'],
          body: { text: 'x', choices: ['one'] },
        })
      ).status,
    ).toBe(400);
    expect(
      (await call('get', '/v1/questions', { token: approver, query: 'status=pending&limit=1' })).body.items,
    ).toHaveLength(1);
    expect((await call('get', '/v1/questions', { token: agent })).status).toBe(403);
    expect(
      (await call('get', '/v1/questions/{id}', { token: agent, args: [asked.body.id], query: 'wait=1' })).body.status,
    ).toBe('pending');
    expect(
      (await call('post', '/v1/questions/{id}/answer', { token: agent, args: [asked.body.id], body: { answer: 'EU' } }))
        .status,
    ).toBe(403);
    expect(
      (
        await call('post', '/v1/questions/{id}/answer', {
          token: approver,
          args: [asked.body.id],
          body: { answer: 'APAC' },
        })
      ).status,
    ).toBe(400);
    const answered = await call('post', '/v1/questions/{id}/answer', {
      token: approver,
      args: [asked.body.id],
      body: { answer: 'EU' },
      headers: { 'x-tollgate-channel': 'cli' },
    });
    expect(answered.body.answer).toMatchObject({ text: 'EU', by: { id: 'bob', via: 'cli' } });
    const late = await call('post', '/v1/questions/{id}/answer', {
      token: admin,
      args: [asked.body.id],
      body: { answer: 'US' },
    });
    expect(late.body).toMatchObject({ status: 409, code: 'already_answered', questionStatus: 'answered' });
    expect((await call('get', '/v1/questions/{id}', { token: auditor, args: [asked.body.id] })).body.status).toBe(
      'answered',
    );
    expect((await call('get', '/v1/questions/{id}', { token: auditor, args: ['q_nope'] })).status).toBe(404);
  });

  it('match their schemas for policy versions, rollback and simulation', async () => {
    const versions = await call('get', '/v1/policy/versions', { token: agent, query: 'limit=1' });
    expect(versions.body.nextCursor).toEqual(expect.any(String));
    expect((await call('get', '/v1/policy/versions', { token: approver, query: 'cursor=nope' })).status).toBe(400);
    const inForce = versions.body.items[0].version;
    const analysis = await call('get', '/v1/policy/analysis', { token: auditor });
    expect(analysis.body).toEqual({ version: inForce, findings: expect.any(Array) });
    expect((await call('get', '/v1/policy/analysis', { token: agent })).status).toBe(403);
    expect((await call('get', '/v1/policy/versions/{version}', { token: auditor, args: ['1'] })).body.version).toBe(1);
    expect((await call('get', '/v1/policy/versions/{version}', { token: auditor, args: ['999'] })).status).toBe(404);
    expect((await call('get', '/v1/policy/versions/{version}', { token: auditor, args: ['one'] })).status).toBe(400);
    const given = await call('post', '/v1/policy/simulate', {
      token: auditor,
      body: {
        document: { rules: [{ match: '*', level: 'deny' }] },
        calls: [{ toolName: 'delete_source', arguments: {}, conversationId: 'conv-1' }],
      },
    });
    expect(given.body.results[0].now.level).toBe('deny');
    expect(
      (
        await call('post', '/v1/policy/simulate', {
          token: admin,
          body: { document: { rules: [] }, days: 1, limit: 1 },
        })
      ).body.over,
    ).toBe('recorded');
    expect(
      (
        await call('post', '/v1/policy/simulate', {
          token: admin,
          body: { document: { rules: [{ match: 'x', level: 'sometimes' }] } },
        })
      ).status,
    ).toBe(400);
    expect(
      (await call('post', '/v1/policy/simulate', { token: approver, body: { document: { rules: [] } } })).status,
    ).toBe(403);
    expect(
      (await call('post', '/v1/policy/rollback', { token: admin, body: { version: 1, reason: 'schema check' } })).body
        .version,
    ).toBe(inForce + 1);
    expect((await call('post', '/v1/policy/rollback', { token: admin, body: { version: inForce } })).body.version).toBe(
      inForce + 2,
    ); // the policy as it was
    expect((await call('post', '/v1/policy/rollback', { token: admin, body: { version: inForce + 2 } })).status).toBe(
      409,
    );
    expect((await call('post', '/v1/policy/rollback', { token: admin, body: { version: 999 } })).status).toBe(404);
    expect((await call('post', '/v1/policy/rollback', { token: admin, body: { version: 'one' } })).status).toBe(400);
    expect((await call('post', '/v1/policy/rollback', { token: approver, body: { version: 1 } })).status).toBe(403);
  });

  it('match their schemas on the public routes, and for what every route can answer', async () => {
    await call('get', '/health/live');
    await call('get', '/health/ready');
    expect((await call('get', '/.well-known/jwks.json')).body.keys).toHaveLength(1);
    expect((await call('get', '/v1/me', { token: agent })).body).toMatchObject({ kind: 'agent', roles: ['agent'] });
    expect((await call('get', '/v1/me', { token: approver })).body).toMatchObject({ kind: 'person' });
    expect((await call('get', '/v1/me')).status).toBe(401);
    expect(await call('get', '/schemas/policy.json')).toMatchObject({ status: 200 });
    expect((await call('get', '/metrics')).body).toMatch(/^# HELP /m);
    // Oversized headers are refused by Node before any route; the problem is the shared 431 of every operation.
    const big = await call('get', '/health/live', { headers: { 'x-padding': 'x'.repeat(20_000) } });
    expect(big.body).toMatchObject({ code: 'headers_too_large', status: 431 });
    expect(
      (
        await call('put', '/v1/tools/{name}', {
          token: admin,
          args: ['big'],
          raw: JSON.stringify({ description: 'x'.repeat(1_100_000) }),
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(413);
  });

  it('a step decision answers as documented: the calls decided and those refused', async () => {
    expect((await call('post', '/v1/conversations', { token: agent, body: { id: 'conv-step' } })).status).toBe(201);
    const step = {
      toolCalls: [
        { toolName: 'delete_source', arguments: { id: 'src_8' } },
        { toolName: 'delete_source', arguments: { id: 'src_9' } },
      ],
    };
    const proposed = await call('post', '/v1/conversations/{id}/tool-calls', {
      token: agent,
      args: ['conv-step'],
      body: step,
    });
    expect(proposed.body.toolCalls.map((c: any) => c.status)).toEqual(['pending', 'pending']);
    expect(
      (
        await call('post', '/v1/conversations/{id}/decisions', {
          token: agent,
          args: ['conv-step'],
          body: { decision: 'approve' },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await call('post', '/v1/conversations/{id}/decisions', {
          token: approver,
          args: ['conv-step'],
          body: { decision: 'maybe' },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await call('post', '/v1/conversations/{id}/decisions', {
          token: approver,
          args: ['nope'],
          body: { decision: 'approve' },
        })
      ).status,
    ).toBe(404);
    const [first] = proposed.body.toolCalls;
    expect(
      (
        await call('post', '/v1/tool-calls/{id}/deadline', {
          token: approver,
          args: [first.id],
          body: { extendBy: 60 },
        })
      ).status,
    ).toBe(403);
    expect(
      (await call('post', '/v1/tool-calls/{id}/deadline', { token: admin, args: [first.id], body: {} })).status,
    ).toBe(400);
    const extended = await call('post', '/v1/tool-calls/{id}/deadline', {
      token: admin,
      args: [first.id],
      body: { extendBy: 60, reason: 'more time' },
    });
    expect(Date.parse(extended.body.approval.expiresAt)).toBe(Date.parse(first.approval.expiresAt) + 60_000);
    const decided = await call('post', '/v1/conversations/{id}/decisions', {
      token: approver,
      args: ['conv-step'],
      body: { decision: 'reject', reason: 'not these' },
    });
    expect(decided.body.toolCalls.map((c: any) => c.status)).toEqual(['rejected', 'rejected']);
    expect(
      (await call('post', '/v1/tool-calls/{id}/deadline', { token: admin, args: [first.id], body: { extendBy: 60 } }))
        .status,
    ).toBe(409);
  });

  it('match their schemas for passkeys and step-up: register, list, challenge, approve, remove', async () => {
    // A rule of its own at the top: the other tests' tools are judged as before.
    const current = (await call('get', '/v1/policy', { token: admin })).body;
    const rules = [{ match: 'pk_wire', level: 'confirm', stepUp: 'passkey' }, ...current.rules];
    expect(
      (await call('put', '/v1/policy', { token: admin, body: { defaults: current.defaults, rules } })).status,
    ).toBe(200);
    const key = new SoftAuthenticator(`http://localhost:${new URL(server.url).port}`);
    const options = await call('post', '/v1/me/passkeys/options', { token: approver });
    const registered = await call('post', '/v1/me/passkeys', {
      token: approver,
      body: { response: key.register(options.body.publicKey), name: 'laptop' },
    });
    expect(registered.status).toBe(201);
    expect((await call('get', '/v1/me/passkeys', { token: approver })).body.passkeys).toHaveLength(1);
    expect((await call('post', '/v1/me/passkeys', { token: approver, body: { response: {} } })).status).toBe(403);
    await call('post', '/v1/conversations', { token: agent, body: { id: 'conv-passkeys' } });
    const proposed = await call('post', '/v1/conversations/{id}/tool-calls', {
      token: agent,
      args: ['conv-passkeys'],
      body: { toolCalls: [{ toolName: 'pk_wire', arguments: { amount: 1 } }] },
    });
    const id = proposed.body.toolCalls[0].id;
    expect(
      (
        await call('post', '/v1/tool-calls/{id}/decision', {
          token: approver,
          args: [id],
          body: { decision: 'approve' },
        })
      ).status,
    ).toBe(403);
    const challenge = await call('post', '/v1/tool-calls/{id}/step-up', { token: approver, args: [id], body: {} });
    expect(challenge.status).toBe(200);
    expect((await call('post', '/v1/tool-calls/{id}/step-up', { token: admin, args: [id] })).status).toBe(409);
    const approved = await call('post', '/v1/tool-calls/{id}/decision', {
      token: approver,
      args: [id],
      body: { decision: 'approve', stepUp: { passkey: key.assert(challenge.body.publicKey) } },
    });
    expect(approved.body.decision.stepUp).toMatchObject({ method: 'passkey', credentialId: registered.body.id });
    const manage = await call('post', '/v1/me/passkeys/assertion-options', { token: approver });
    expect(
      (await call('delete', '/v1/me/passkeys/{id}', { token: approver, args: [registered.body.id], body: {} })).status,
    ).toBe(400);
    const removed = await call('delete', '/v1/me/passkeys/{id}', {
      token: approver,
      args: [registered.body.id],
      body: { assertion: key.assert(manage.body.publicKey) },
    });
    expect(removed.status).toBe(204);
    expect((await call('get', '/v1/me/passkeys', { token: agent })).status).toBe(403);

    // An admin's recovery for a lost device.
    const again = await call('post', '/v1/me/passkeys/options', { token: approver });
    const lost = await call('post', '/v1/me/passkeys', {
      token: approver,
      body: { response: key.register(again.body.publicKey) },
    });
    const listed = await call('get', '/v1/people/{personId}/passkeys', { token: admin, args: ['bob'] });
    expect(listed.body.passkeys.map((k: { id: string }) => k.id)).toEqual([lost.body.id]);
    const adminKey = new SoftAuthenticator(key.origin);
    const adminOptions = await call('post', '/v1/me/passkeys/options', { token: admin });
    await call('post', '/v1/me/passkeys', {
      token: admin,
      body: { response: adminKey.register(adminOptions.body.publicKey) },
    });
    const sign = async () =>
      adminKey.assert(
        (await call('post', '/v1/me/passkeys/assertion-options', { token: admin, body: { purpose: 'revoke' } })).body
          .publicKey,
      );
    const revoked = await call('delete', '/v1/people/{personId}/passkeys/{id}', {
      token: admin,
      args: ['bob', lost.body.id],
      body: { assertion: await sign() },
    });
    expect(revoked.status).toBe(204);
    expect(
      (
        await call('delete', '/v1/people/{personId}/passkeys/{id}', {
          token: admin,
          args: ['bob', lost.body.id],
          body: { assertion: await sign() },
        })
      ).status,
    ).toBe(404);
  });

  it('match their schemas for how people are reached: notification settings and push subscriptions', async () => {
    expect((await call('get', '/v1/me/notifications', { token: approver })).body.email).toBe('immediate');
    const set = await call('put', '/v1/me/notifications', {
      token: approver,
      body: { email: 'daily', quietHours: { from: '22:00', to: '07:00' } },
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ email: 'daily', quietHours: { from: '22:00', to: '07:00' } });
    expect((await call('put', '/v1/me/notifications', { token: approver, body: { email: 'weekly' } })).status).toBe(
      400,
    );

    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    expect((await call('get', '/v1/push/vapid-public-key', { token: approver })).status).toBe(200);
    const made = await call('post', '/v1/me/push-subscriptions', {
      token: approver,
      body: {
        endpoint: 'http://127.0.0.1:9/push/openapi',
        expirationTime: null,
        keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') },
      },
    });
    expect(made.status).toBe(201);
    expect((await call('get', '/v1/me/push-subscriptions', { token: approver })).body.subscriptions).toHaveLength(1);
    expect(
      (await call('delete', '/v1/me/push-subscriptions/{id}', { token: approver, args: [made.body.id] })).status,
    ).toBe(204);
  });

  it('match their schemas for delegation: set, read, list, decide on behalf, end', async () => {
    const vic = await server.token('vic', ['viewer'], { name: 'Vic' });
    expect((await call('get', '/v1/me', { token: vic })).status).toBe(200);
    expect((await call('get', '/v1/me/delegation', { token: admin })).status).toBe(404);
    const until = new Date(Date.now() + 86_400_000).toISOString();
    const set = await call('put', '/v1/me/delegation', { token: admin, body: { to: 'vic', until, reason: 'Away' } });
    expect(set.body).toMatchObject({ to: { id: 'vic', name: 'Vic' }, until, active: true });
    expect((await call('put', '/v1/me/delegation', { token: admin, body: { to: 'ann', until } })).status).toBe(400);
    expect((await call('get', '/v1/me/delegation', { token: admin })).body).toEqual(set.body);
    expect((await call('get', '/v1/delegations', { token: auditor })).body.items).toHaveLength(1);

    // Vic decides on Ann's behalf: the call, its decision and the audit event show both.
    expect(
      (
        await call('put', '/v1/policy', {
          token: admin,
          body: { rules: [{ match: 'delegated_tool', level: 'confirm', approvers: ['admin'] }] },
        })
      ).status,
    ).toBe(200);
    expect((await call('post', '/v1/conversations', { token: agent, body: { id: 'openapi-delegation' } })).status).toBe(
      201,
    );
    const proposed = await call('post', '/v1/conversations/{id}/tool-calls', {
      token: agent,
      args: ['openapi-delegation'],
      body: { toolCalls: [{ toolName: 'delegated_tool', arguments: {} }] },
    });
    const id = proposed.body.toolCalls[0].id;
    const decided = await call('post', '/v1/tool-calls/{id}/decision', {
      token: vic,
      args: [id],
      body: { decision: 'approve' },
    });
    expect(decided.body.decision.by.onBehalfOf).toEqual({ id: 'ann', name: 'Ann' });
    const events = await call('get', '/v1/audit/events', { token: auditor, query: `toolCallId=${id}` });
    expect(events.body.events.at(-1).actor.onBehalfOf).toEqual({ id: 'ann', name: 'Ann' });

    expect((await call('delete', '/v1/me/delegation', { token: admin })).status).toBe(204);
  });

  it('match their schemas for pending changes of the control plane (governance)', async () => {
    // A tenant of its own: governance there holds nothing of the other tests.
    const ann = await server.token('ann', ['admin'], { name: 'Ann', tenant: 'openapi-gov' });
    const bob = await server.token('bob', ['admin'], { name: 'Bob', tenant: 'openapi-gov' });
    const governed = { governance: { quorum: 2 }, rules: [{ match: '*', level: 'confirm' }] };
    expect((await call('put', '/v1/policy', { token: ann, body: governed })).status).toBe(200);
    const held = await call('put', '/v1/policy', { token: ann, body: { ...governed, rules: [] } });
    expect(held.status).toBe(202);
    const id = held.body.pendingChange.id;
    expect((await call('get', '/v1/changes', { token: bob, query: 'status=pending' })).body.items).toHaveLength(1);
    expect((await call('get', '/v1/changes', { token: bob, query: 'status=never' })).status).toBe(400);
    expect((await call('get', '/v1/changes/{id}', { token: bob, args: [id] })).body.status).toBe('pending');
    expect((await call('get', '/v1/changes/{id}', { token: bob, args: ['chg_nope'] })).status).toBe(404);
    expect((await call('post', '/v1/changes/{id}/approve', { token: ann, args: [id] })).status).toBe(403);
    expect((await call('post', '/v1/changes/{id}/approve', { token: bob, args: [id] })).body.applied).toBe(true);
    expect((await call('post', '/v1/changes/{id}/approve', { token: bob, args: [id] })).status).toBe(409);
    const rollback = await call('post', '/v1/policy/rollback', { token: ann, body: { version: 1 } });
    expect(rollback.status).toBe(202);
    const rejected = await call('post', '/v1/changes/{id}/reject', {
      token: bob,
      args: [rollback.body.pendingChange.id],
      body: { reason: 'not now' },
    });
    expect(rejected.body.status).toBe('rejected');
  });

  it('have covered the success answer of every operation', () => {
    expect(
      operations(doc)
        .map((o) => o.op.operationId)
        .filter((id) => !checkedSuccess.has(id)),
    ).toEqual([]);
  });
});
