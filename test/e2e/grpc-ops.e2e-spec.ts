import * as grpc from '@grpc/grpc-js';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, Server } from 'node:http';
import { AddressInfo, createServer as createTcpServer } from 'node:net';
import { Client } from 'pg';
import protobuf from 'protobufjs';
import { FileDescriptorProto } from 'protobufjs/ext/descriptor';
import { mintToken } from '../../src/infrastructure/auth/jwt-verifier';
import { freshDatabase, TestDatabase } from '../support/database';
import { client } from '../support/http';
import { healthClient, reflectionClient, struct, TollgateGrpc } from '../support/grpc';
import { BIN, exited, freePort, ServerProcess, serverEnv, spawnServer } from '../support/process';
import { startTestServer, TEST_SECRET, TestServer } from '../support/server';
import { eventually } from '../support/wait';

/**
 * Running the gRPC API: health that follows readiness, reflection a Go client (grpcurl, buf curl) can use,
 * TOLLGATE_GRPC_PORT (off, a busy port), a graceful stop, failing closed when the database goes away, and, on the
 * real CLI, the banner, one access line per call, metrics and a span that continues the caller's trace.
 */

describe('the standard services', () => {
  let server: TestServer;
  let health: ReturnType<typeof healthClient>;

  beforeAll(async () => {
    server = await startTestServer();
    health = healthClient(server.grpcAddress!);
  });

  afterAll(async () => {
    health?.close();
    await server?.stop();
  });

  it('grpc.health.v1.Health: SERVING for the server and for tollgate.v1.Tollgate, NOT_FOUND for anything else', async () => {
    expect(await health.check('')).toBe('SERVING');
    expect(await health.check('tollgate.v1.Tollgate')).toBe('SERVING');
    await expect(health.check('tollgate.v1.Nope')).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    expect(await health.list()).toEqual({ '': 'SERVING', 'tollgate.v1.Tollgate': 'SERVING' });
  });

  /**
   * What grpcurl does without the proto file: list the services, fetch the file that holds one and its imports,
   * build its types from them alone (Go's protodesc refuses unresolved or relative names, missing imports and
   * misnamed map entries, so those are checked too), and call a method with those types.
   */
  it('server reflection (v1 and v1alpha): lists the services, and answers descriptors complete enough to call with', async () => {
    for (const version of ['v1', 'v1alpha'] as const) {
      const r = reflectionClient(server.grpcAddress!, version);
      const listed = await r.ask({ listServices: '*' });
      expect(listed.listServicesResponse.service.map((s: { name: string }) => s.name)).toEqual(
        expect.arrayContaining(['tollgate.v1.Tollgate', 'grpc.health.v1.Health']),
      );
      r.close();
    }
    const r = reflectionClient(server.grpcAddress!);
    const answer = await r.ask({ fileContainingSymbol: 'tollgate.v1.Tollgate' });
    r.close();
    const files = (answer.fileDescriptorResponse.fileDescriptorProto as Buffer[]).map(
      (b) => FileDescriptorProto.toObject(FileDescriptorProto.decode(b)) as any,
    );
    const names = files.map((f) => f.name);
    const defined = new Map<string, string>(); // fully qualified type → file
    const walk = (scope: string, file: string, messages: any[] = [], enums: any[] = []) => {
      for (const e of enums) defined.set(`.${scope}.${e.name}`, file);
      for (const m of messages) {
        defined.set(`.${scope}.${m.name}`, file);
        walk(`${scope}.${m.name}`, file, m.nestedType, m.enumType);
      }
    };
    for (const f of files) walk(f.package, f.name, f.messageType, f.enumType);
    const tollgateFile = files.find((f) => (f.service ?? []).some((s: any) => s.name === 'Tollgate'));
    const refs: Array<{ file: any; ref: string }> = [];
    const collect = (file: any, messages: any[] = []) => {
      for (const m of messages) {
        for (const fld of m.field ?? []) if (fld.typeName) refs.push({ file, ref: fld.typeName });
        for (const n of m.nestedType ?? [])
          if (n.options?.mapEntry)
            expect(
              m.field.some(
                (fld: any) =>
                  `${fld.name.replace(/(^|_)([a-z])/g, (_: string, __: string, c: string) => c.toUpperCase())}Entry` ===
                  n.name,
              ),
            ).toBe(true);
        collect(file, m.nestedType);
      }
    };
    for (const f of files) collect(f, f.messageType);
    for (const s of tollgateFile.service)
      for (const m of s.method)
        refs.push({ file: tollgateFile, ref: m.inputType }, { file: tollgateFile, ref: m.outputType });
    for (const { file, ref } of refs) {
      expect(ref).toMatch(/^\./); // fully qualified
      const home = defined.get(ref);
      expect({ ref, found: home !== undefined }).toEqual({ ref, found: true });
      if (home !== file.name) expect(file.dependency).toContain(home);
    }
    for (const f of files) for (const d of f.dependency ?? []) expect(names).toContain(d);

    // Types built from the descriptors alone call the service.
    const root = (protobuf.Root as unknown as { fromDescriptor(set: object): protobuf.Root }).fromDescriptor({
      file: files,
    });
    const Request = root.lookupType('tollgate.v1.StartConversationRequest');
    const Response = root.lookupType('tollgate.v1.StartConversationResponse');
    const token = await server.token('bot', ['agent']);
    const rpc = new TollgateGrpc(server.grpcAddress!);
    const bytes = await new Promise<Buffer>((resolve, reject) =>
      rpc.client.makeUnaryRequest(
        '/tollgate.v1.Tollgate/StartConversation',
        (o: object) => Buffer.from(Request.encode(Request.fromObject(o)).finish()),
        (b: Buffer) => b,
        { id: 'conv-reflected', title: 'by reflection' },
        rpc.metadata(token),
        (e: grpc.ServiceError | null, b?: Buffer) => (e ? reject(e) : resolve(b!)),
      ),
    );
    rpc.close();
    expect(Response.toObject(Response.decode(bytes), { enums: String })).toMatchObject({
      created: true,
      conversation: { id: 'conv-reflected', title: 'by reflection', status: 'CONVERSATION_STATUS_ACTIVE' },
    });
  });

  it('answers each call with its request id, the caller’s own when it sent a sensible one', async () => {
    const rpc = new TollgateGrpc(server.grpcAddress!);
    const token = await server.token('audrey', ['auditor']);
    expect(
      (await rpc.callWithTrailers('GetStatus', {}, token, { 'x-request-id': 'mine-1' })).trailers.get('x-request-id'),
    ).toEqual(['mine-1']);
    expect(
      (await rpc.callWithTrailers('GetStatus', {}, token, { 'x-request-id': 'not sensible!' })).trailers.get(
        'x-request-id',
      )[0],
    ).toMatch(/^req_[0-9a-f]{32}$/);
    rpc.close();
  });
});

describe('TOLLGATE_GRPC_PORT=off', () => {
  it('serves REST alone', async () => {
    const server = await startTestServer({ grpcPort: undefined });
    try {
      expect(server.grpcAddress).toBeUndefined();
      expect((await client(server.url).get('/health/ready')).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

describe('stopping', () => {
  it('turns health NOT_SERVING, ends each watch with the call as it stands (UNAVAILABLE: watch again), and finishes', async () => {
    const server = await startTestServer();
    const rpc = new TollgateGrpc(server.grpcAddress!);
    const health = healthClient(server.grpcAddress!);
    try {
      const agent = await server.token('bot', ['agent']);
      await rpc.call('StartConversation', { id: 'conv-stop' }, agent);
      const { toolCalls } = await rpc.call(
        'ProposeToolCalls',
        { conversationId: 'conv-stop', toolCalls: [{ toolName: 'unknown', arguments: struct({}) }] },
        agent,
      );
      const watch = rpc.watch(toolCalls[0].id, agent);
      await watch.received(1);
      const statuses: string[] = [];
      const healthWatch = health.client.Watch({ service: 'tollgate.v1.Tollgate' });
      healthWatch.on('data', (m: { status: string }) => statuses.push(m.status));
      const healthEnded = new Promise<void>(
        (resolve) => (healthWatch.on('end', resolve), healthWatch.on('error', () => resolve())),
      );
      await eventually(() => (statuses.length > 0 ? true : undefined), 5000, 'the first health status');

      await server.stop();
      expect(await watch.ended).toMatchObject({
        ok: false,
        code: grpc.status.UNAVAILABLE,
        tollgateCode: 'unavailable',
      });
      expect(watch.messages.map((m) => m.status)).toEqual(['TOOL_CALL_STATUS_PENDING']);
      await healthEnded;
      expect(statuses).toEqual(['SERVING', 'NOT_SERVING']);
    } finally {
      rpc.close();
      health.close();
    }
  }, 30_000);
});

describe('when the database goes away', () => {
  let server: TestServer;
  let rpc: TollgateGrpc;
  let health: ReturnType<typeof healthClient>;
  let admin: string;
  let pendingId: string;
  let watched: grpc.ClientReadableStream<{ status: string }>;
  const statuses: string[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    rpc = new TollgateGrpc(server.grpcAddress!);
    health = healthClient(server.grpcAddress!);
    const agent = await server.token('bot', ['agent']);
    admin = await server.token('ann', ['admin']);
    await rpc.call('StartConversation', { id: 'conv-away' }, agent);
    pendingId = (
      await rpc.call(
        'ProposeToolCalls',
        { conversationId: 'conv-away', toolCalls: [{ toolName: 'unknown', arguments: struct({}) }] },
        agent,
      )
    ).toolCalls[0].id;
    watched = health.client.Watch({ service: '' });
    watched.on('data', (m: { status: string }) => statuses.push(m.status));
    watched.on('error', () => undefined);
    await eventually(() => (statuses.length > 0 ? true : undefined), 5000, 'the first health status');
    if (server.db.url) {
      const name = new URL(server.db.url).pathname.slice(1);
      const pg = new Client({ connectionString: process.env.DATABASE_URL });
      await pg.connect();
      await pg.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await pg.end();
    } else {
      await server.dataSource.destroy();
    }
  });

  afterAll(async () => {
    watched?.cancel();
    rpc?.close();
    health?.close();
    await server?.stop();
  });

  it('refuses a decision with UNAVAILABLE unavailable (retry in 2 s) instead of approving without a record', async () => {
    const f = await rpc.failure('DecideToolCall', { id: pendingId, decision: 'DECISION_KIND_APPROVE' }, admin);
    expect(f).toMatchObject({
      code: grpc.status.UNAVAILABLE,
      tollgateCode: 'unavailable',
      info: { reason: 'unavailable', domain: 'tollgate' },
      retryDelaySeconds: 2,
    });
    expect((await rpc.failure('GetToolCall', { id: pendingId }, admin)).code).toBe(grpc.status.UNAVAILABLE);
  });

  it('tells a health watch NOT_SERVING (looked at every 5 s while watched), and Check answers it', async () => {
    await eventually(() => (statuses.includes('NOT_SERVING') ? true : undefined), 20_000, 'NOT_SERVING on the watch');
    expect(statuses).toEqual(['SERVING', 'NOT_SERVING']);
    expect(await health.check('')).toBe('NOT_SERVING');
    expect(await health.check('tollgate.v1.Tollgate')).toBe('NOT_SERVING');
  });
});

describe('the real CLI', () => {
  let db: TestDatabase;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let server: ServerProcess;
  let address: string;

  beforeAll(async () => {
    db = await freshDatabase();
    collector = await startCollector();
    const grpcPort = await freePort();
    address = `127.0.0.1:${grpcPort}`;
    server = await spawnServer({
      DATABASE_URL: db.url,
      TOLLGATE_DATA_DIR: db.dataDir,
      TOLLGATE_JWT_SECRET: TEST_SECRET,
      TOLLGATE_GRPC_PORT: String(grpcPort),
      LOG_LEVEL: 'debug',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
  }, 120_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await exited(server.child);
    }
    await collector?.close();
    await db?.drop();
  });

  const lines = () =>
    server
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));

  it('names the gRPC address in its banner', async () => {
    const banner = await eventually(
      () => lines().find((l) => /^Tollgate listening on /.test(l.msg)),
      10_000,
      'the banner',
    );
    expect(banner).toMatchObject({ url: server.url, grpc: address });
  });

  it('writes one access line per call, counts it in /metrics, and continues the caller’s trace', async () => {
    const rpc = new TollgateGrpc(address);
    const ann = await mintToken(TEST_SECRET, { sub: 'ann', roles: ['approver'] }, '1h');
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const f = await rpc.failure('GetToolCall', { id: 'tc_missing' }, ann, {
      'x-request-id': 'grpc-logged',
      traceparent: `00-${traceId}-${callerSpan}-01`,
    });
    expect(f.code).toBe(grpc.status.NOT_FOUND);
    await rpc.call('GetStatus', {}, ann);
    rpc.close();

    const span = await eventually(
      () => collector.spans.find((s) => s.traceId === traceId && s.kind === SERVER),
      20_000,
      'the gRPC server span',
    );
    expect(span).toMatchObject({
      name: 'tollgate.v1.Tollgate/GetToolCall',
      parentSpanId: callerSpan,
      attributes: expect.objectContaining({
        'rpc.system': 'grpc',
        'rpc.service': 'tollgate.v1.Tollgate',
        'rpc.method': 'GetToolCall',
        'rpc.grpc.status_code': grpc.status.NOT_FOUND,
      }),
    });
    const query = await eventually(
      () =>
        collector.spans.find((s) => s.traceId === traceId && s.parentSpanId === span.spanId && s.name.startsWith('pg')),
      20_000,
      'a query span under it',
    );
    expect(query.scope).toBe('@opentelemetry/instrumentation-pg');

    const line = await eventually(() => lines().find((l) => l.req_id === 'grpc-logged'), 10_000, 'the access line');
    expect(line).toMatchObject({
      level: 'info',
      msg: expect.stringMatching(/^gRPC \/tollgate\.v1\.Tollgate\/GetToolCall NOT_FOUND \d+ms$/),
      rpc: '/tollgate.v1.Tollgate/GetToolCall',
      grpc_status: 'NOT_FOUND',
      grpc_code: 5,
      duration_ms: expect.any(Number),
      tenant: 'default',
      principal: { sub: 'ann', roles: ['approver'] },
      code: 'not_found',
      trace_id: traceId,
      span_id: span.spanId,
    });
    expect(JSON.stringify(lines())).not.toContain(ann); // the token is never logged

    const metrics = (await client(server.url).get('/metrics')).body as string;
    expect(metrics).toMatch(
      /^tollgate_grpc_requests_total\{service="tollgate\.v1\.Tollgate",method="GetToolCall",code="NOT_FOUND"\} 1$/m,
    );
    expect(metrics).toMatch(
      /^tollgate_grpc_requests_total\{service="tollgate\.v1\.Tollgate",method="GetStatus",code="OK"\} 1$/m,
    );
    expect(metrics).toMatch(
      /^tollgate_grpc_request_duration_seconds_count\{service="tollgate\.v1\.Tollgate",method="GetToolCall"\} 1$/m,
    );
  }, 60_000);

  it('refuses to start, in one line naming TOLLGATE_GRPC_PORT, when the gRPC port is in use (exit 2)', async () => {
    const holder = createTcpServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const busy = (holder.address() as AddressInfo).port;
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-grpc-busy-')); // the running server holds db.dataDir
    try {
      const child = spawn(process.execPath, [BIN, 'serve'], {
        env: serverEnv({
          PORT: String(await freePort()),
          TOLLGATE_GRPC_PORT: String(busy),
          DATABASE_URL: db.url,
          TOLLGATE_DATA_DIR: dataDir,
          TOLLGATE_JWT_SECRET: TEST_SECRET,
        }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d) => (stdout += d));
      child.stderr!.on('data', (d) => (stderr += d));
      expect(await exited(child)).toBe(2);
      expect(stderr.trim().split('\n')).toEqual([
        `tollgate: gRPC port ${busy} on 127.0.0.1 is in use; set TOLLGATE_GRPC_PORT to a free port (or off), or stop what holds it`,
      ]);
      expect(stdout).not.toMatch(/listening/);
    } finally {
      await new Promise<void>((r) => holder.close(() => r()));
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

// ---- An OTLP/HTTP JSON collector stand-in, as in tracing.e2e-spec.ts ----

const SERVER = 2;

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  scope: string;
  attributes: Record<string, unknown>;
}

async function startCollector(): Promise<{ url: string; spans: ReceivedSpan[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const attrs = (list: Array<{ key: string; value: Record<string, unknown> }> = []) =>
    Object.fromEntries(list.map((a) => [a.key, Object.values(a.value)[0]]));
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        for (const rs of JSON.parse(body).resourceSpans ?? []) {
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? [])
              spans.push({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                name: s.name,
                kind: s.kind,
                scope: ss.scope?.name,
                attributes: attrs(s.attributes),
              });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
