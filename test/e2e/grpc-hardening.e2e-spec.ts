import * as grpc from '@grpc/grpc-js';
import http2 from 'node:http2';
import { Writable } from 'node:stream';
import pino from 'pino';
import { DataSource } from 'typeorm';
import { GrpcServer } from '../../src/adapters/grpc/grpc-server';
import { TollgateRpcs } from '../../src/adapters/grpc/tollgate.rpcs';
import { AuthFailureLimiter } from '../../src/adapters/api/auth-failures';
import { TollgateMetrics } from '../../src/adapters/metrics/metrics';
import { JwtVerifier } from '../../src/infrastructure/auth/jwt-verifier';
import { TollgateGrpc } from '../support/grpc';
import { startTestServer, TestServer } from '../support/server';
import { eventually } from '../support/wait';
import { TokenRateLimit } from '../../src/adapters/api/limits';

/**
 * The gRPC port against a peer that does not play fair: oversized metadata, more streams than a connection may
 * carry, calls whose message never comes, connections left open, unauthenticated streams held open, ids of
 * 100,000 characters. Every case goes over a real HTTP/2 connection (grpc-js, or Node's http2 client where grpc-js
 * would not misbehave), to the real server.
 */

interface RawEnd {
  /** grpc-status of the answer (trailers, or a trailers-only answer); undefined when the stream was reset. */
  grpcStatus?: number;
  tollgateCode?: string;
  message?: string;
  /** RST_STREAM code the stream closed with (0: closed normally). */
  rstCode: number;
}

/** One call on a raw HTTP/2 session: the headers a gRPC client sends, then `body` (a framed message) or nothing. */
function rawCall(
  session: http2.ClientHttp2Session,
  path: string,
  headers: Record<string, string> = {},
  body?: Buffer,
): { stream: http2.ClientHttp2Stream; ended: Promise<RawEnd> } {
  const stream = session.request(
    { ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...headers },
    { endStream: false },
  );
  const end: Partial<RawEnd> = {};
  const read = (h: http2.IncomingHttpHeaders) => {
    if (h['grpc-status'] !== undefined) end.grpcStatus = Number(h['grpc-status']);
    if (typeof h['tollgate-code'] === 'string') end.tollgateCode = h['tollgate-code'];
    if (typeof h['grpc-message'] === 'string') end.message = decodeURIComponent(h['grpc-message']);
  };
  stream.on('response', read);
  stream.on('trailers', read);
  stream.on('error', () => undefined); // a refused stream errors; its rstCode tells how
  stream.resume();
  if (body) stream.end(body);
  const ended = new Promise<RawEnd>((resolve) =>
    stream.on('close', () => resolve({ ...end, rstCode: stream.rstCode ?? 0 })),
  );
  return { stream, ended };
}

/** A gRPC frame: uncompressed, length, message. */
function frame(message: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

function connect(address: string, opts: http2.ClientSessionOptions = {}): http2.ClientHttp2Session {
  const session = http2.connect(`http://${address}`, opts);
  session.on('error', () => undefined);
  return session;
}

/** Node 20's client spins for ever if a session is destroyed in the same tick one of its streams closed. */
async function destroy(...sessions: http2.ClientHttp2Session[]): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  for (const s of sessions) s.destroy();
}

const closed = (s: http2.ClientHttp2Session) =>
  new Promise<void>((resolve) => (s.closed || s.destroyed ? resolve() : s.once('close', () => resolve())));

describe('the gRPC port with its default limits', () => {
  let server: TestServer;
  let tollgate: TollgateGrpc;
  let agent: string;

  beforeAll(async () => {
    server = await startTestServer();
    tollgate = new TollgateGrpc(server.grpcAddress!);
    agent = await server.token('bot', ['agent']);
  });

  afterAll(async () => {
    tollgate?.close();
    await server?.stop();
  });

  it('refuses metadata past 16 KiB with headers_too_large, before the token is even read; 15 KiB passes', async () => {
    const big = { 'x-pad': 'p'.repeat(17 * 1024) };
    expect(await tollgate.failure('GetToolCall', { id: 'tc_1' }, agent, big)).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      tollgateCode: 'headers_too_large',
    });
    expect(await tollgate.failure('GetToolCall', { id: 'tc_1' }, undefined, big)).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      tollgateCode: 'headers_too_large',
    });
    // Split over many entries it is the same metadata.
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x-pad-${i}`, 'p'.repeat(500)]));
    expect(await tollgate.failure('GetToolCall', { id: 'tc_1' }, agent, many)).toMatchObject({
      tollgateCode: 'headers_too_large',
    });
    expect(
      await tollgate.failure('GetToolCall', { id: 'tc_1' }, agent, { 'x-pad': 'p'.repeat(15 * 1024) }),
    ).toMatchObject({ code: grpc.status.NOT_FOUND, tollgateCode: 'not_found' });
  });

  it('closes the connection after refusing oversized metadata (GOAWAY), as HTTP/1 does after a 431', async () => {
    const session = connect(server.grpcAddress!);
    const goaway = new Promise<number>((resolve) => session.once('goaway', (code) => resolve(code)));
    const call = rawCall(session, '/grpc.health.v1.Health/Check', { 'x-pad': 'p'.repeat(17 * 1024) }, frame());
    expect(await call.ended).toMatchObject({
      grpcStatus: grpc.status.INVALID_ARGUMENT,
      tollgateCode: 'headers_too_large',
    });
    expect(await goaway).toBe(http2.constants.NGHTTP2_NO_ERROR);
    await closed(session);
  });

  it('carries at most 100 calls at once on one connection: the 101st stream is refused (REFUSED_STREAM)', async () => {
    // This client does not wait for the server's SETTINGS (as an attacker would not): all 101 go out at once.
    const session = connect(server.grpcAddress!, { peerMaxConcurrentStreams: 1000 });
    const calls = Array.from({ length: 101 }, () =>
      rawCall(session, '/tollgate.v1.Tollgate/GetToolCall', { authorization: `Bearer ${agent}` }),
    );
    const refused = await Promise.race(calls.map((c, i) => c.ended.then((end) => ({ i, end }))));
    expect(refused.end.rstCode).toBe(http2.constants.NGHTTP2_REFUSED_STREAM);
    expect(calls.filter((c) => c.stream.closed).length).toBe(1); // (a count: a failing stream list would print for ever)
    expect(session.remoteSettings.maxConcurrentStreams).toBe(100);
    await destroy(session);
  });

  it('answers a call without a token at once, without waiting for its message', async () => {
    const session = connect(server.grpcAddress!);
    const call = rawCall(session, '/tollgate.v1.Tollgate/GetToolCall'); // headers only: no message, no end
    expect(await call.ended).toMatchObject({
      grpcStatus: grpc.status.UNAUTHENTICATED,
      tollgateCode: 'unauthenticated',
    });
    await destroy(session);
  });

  it('answers an id of 100,000 characters NOT_FOUND without a lookup and without echoing it', async () => {
    const id = 'x'.repeat(100_000);
    for (const [method, request] of [
      ['GetToolCall', { id }],
      ['DecideToolCall', { id, decision: 'DECISION_KIND_APPROVE' }],
      ['ClaimExecution', { id }],
      ['GetQuestion', { id }],
      ['GetConversation', { conversationId: id, externalIds: ['call_1'] }],
      ['ProposeToolCalls', { conversationId: id, toolCalls: [] }],
      ['AskQuestion', { conversationId: id, text: 'why?' }],
    ] as const) {
      const f = await tollgate.failure(
        method,
        request,
        method === 'DecideToolCall' ? await server.token('ann', ['approver']) : agent,
      );
      expect([method, f.code, f.tollgateCode]).toEqual([method, grpc.status.NOT_FOUND, 'not_found']);
      expect(f.details).not.toContain('xxxxxxxx');
      expect(f.details.length).toBeLessThan(200);
    }
    const watch = tollgate.watch(id, agent);
    expect(await watch.ended).toMatchObject({ ok: false, code: grpc.status.NOT_FOUND, tollgateCode: 'not_found' });
  });
});

describe('the gRPC port with short limits', () => {
  let server: TestServer;
  let grpcServer: GrpcServer;
  let address: string;
  let agent: string;
  const lines: Array<Record<string, any>> = [];

  beforeAll(async () => {
    server = await startTestServer({ grpcPort: undefined, rateLimitPer10s: 10 });
    agent = await server.token('bot', ['agent']);
    const app = server.app;
    // The same server class with the application's own services, on a port of its own, with limits a test can wait for.
    // Its own failed-authentication budget (3 per 10 s): the application's is off in tests.
    grpcServer = new GrpcServer(
      app.get(TollgateRpcs),
      app.get(JwtVerifier),
      app.get(TokenRateLimit),
      app.get(TollgateMetrics),
      app.get(DataSource),
      new AuthFailureLimiter(3),
    );
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    address = await grpcServer.listen('127.0.0.1', 0, pino({ level: 'debug' }, sink), {
      requestTimeoutMs: 300,
      connectionIdleMs: 300,
      connectionAgeMs: 1500,
      connectionAgeGraceMs: 300,
      maxAnonymousPerAddress: 3,
    });
  });

  afterAll(async () => {
    await grpcServer?.close();
    await server?.stop();
  });

  const accessLine = (reqId: string) => eventually(() => lines.find((l) => l.req_id === reqId && l.rpc));

  it('ends a call whose message does not come once the request time is up (DEADLINE_EXCEEDED, logged at info)', async () => {
    const session = connect(address);
    const call = rawCall(session, '/tollgate.v1.Tollgate/GetToolCall', {
      authorization: `Bearer ${agent}`,
      'x-request-id': 'stalled-1',
    });
    expect(await call.ended).toMatchObject({ grpcStatus: grpc.status.DEADLINE_EXCEEDED });
    expect(await accessLine('stalled-1')).toMatchObject({ level: 30, grpc_status: 'DEADLINE_EXCEEDED' });
    await destroy(session);
  });

  it('counts a call against its token’s rate before its message comes: past the rate, one is refused at once', async () => {
    const token = await server.token('hasty', ['agent']);
    const session = connect(address);
    const calls = Array.from({ length: 11 }, () =>
      rawCall(session, '/tollgate.v1.Tollgate/GetToolCall', { authorization: `Bearer ${token}` }),
    );
    const first = await Promise.race(calls.map((c) => c.ended));
    expect(first).toMatchObject({ grpcStatus: grpc.status.RESOURCE_EXHAUSTED, tollgateCode: 'rate_limited' });
    expect(calls.filter((c) => c.stream.closed).length).toBe(1); // the other ten wait for their message
    await destroy(session);
  });

  it('logs a call whose client went away at info, not as a server error', async () => {
    const session = connect(address);
    await new Promise((resolve) => session.once('connect', resolve));
    rawCall(session, '/tollgate.v1.Tollgate/GetToolCall', {
      authorization: `Bearer ${agent}`,
      'x-request-id': 'gone-1',
    });
    // HTTP/2 frames are read in order: once the ping (sent after the call's headers) is answered, the server has the call.
    await new Promise((resolve) => session.ping((e) => resolve(e)));
    await destroy(session);
    const line = await accessLine('gone-1');
    expect(line.level).toBeLessThan(50);
  });

  it('closes a connection that carries no call (GOAWAY)', async () => {
    const session = connect(address);
    const call = rawCall(session, '/grpc.health.v1.Health/Check', {}, frame());
    expect(await call.ended).toMatchObject({ grpcStatus: grpc.status.OK });
    const goaway = new Promise<number>((resolve) => session.once('goaway', (code) => resolve(code)));
    expect(await goaway).toBe(http2.constants.NGHTTP2_NO_ERROR);
    await closed(session);
  });

  it('asks a busy connection to go away at its age, and cuts it after the grace', async () => {
    const session = connect(address);
    const goaway = new Promise<number>((resolve) => session.once('goaway', (code) => resolve(code)));
    const watch = rawCall(session, '/grpc.health.v1.Health/Watch', {}, frame());
    expect(await goaway).toBe(http2.constants.NGHTTP2_NO_ERROR);
    await watch.ended; // cut once the grace is over
    await closed(session);
  });

  it('holds at most 3 health and reflection calls from one address at once: the 4th is rate_limited', async () => {
    const a = connect(address);
    const b = connect(address);
    const watches = [
      rawCall(a, '/grpc.health.v1.Health/Watch', {}, frame()),
      rawCall(a, '/grpc.health.v1.Health/Watch', {}, frame()),
      rawCall(b, '/grpc.health.v1.Health/Watch', {}, frame()),
    ];
    await Promise.all(watches.map((w) => new Promise((resolve) => w.stream.once('data', resolve)))); // each has its first answer
    const fourth = rawCall(b, '/grpc.health.v1.Health/Watch', {}, frame());
    expect(await fourth.ended).toMatchObject({
      grpcStatus: grpc.status.RESOURCE_EXHAUSTED,
      tollgateCode: 'rate_limited',
    });
    // A call with a token is not held back by them.
    const client = new TollgateGrpc(address);
    expect(await client.failure('GetToolCall', { id: 'tc_1' }, agent)).toMatchObject({ tollgateCode: 'not_found' });
    client.close();
    // One ends: room for another.
    watches[0].stream.close();
    await watches[0].ended;
    const again = rawCall(b, '/grpc.health.v1.Health/Watch', {}, frame());
    await new Promise((resolve) => again.stream.once('data', resolve));
    await destroy(a, b);
  });

  // Last: it spends this address's failed-authentication budget for the next 10 s.
  it('closes the connection of a peer past its failed-authentication budget (GOAWAY), after refusing its call', async () => {
    const session = connect(address);
    const goaway = new Promise<number>((resolve) => session.once('goaway', (code) => resolve(code)));
    for (let i = 0; i < 3; i++)
      expect(
        await rawCall(session, '/tollgate.v1.Tollgate/GetToolCall', { authorization: 'Bearer forged' }).ended,
      ).toMatchObject({ tollgateCode: 'unauthenticated' });
    expect(session.closed || session.destroyed).toBe(false);
    expect(
      await rawCall(session, '/tollgate.v1.Tollgate/GetToolCall', { authorization: 'Bearer forged' }).ended,
    ).toMatchObject({ grpcStatus: grpc.status.RESOURCE_EXHAUSTED, tollgateCode: 'rate_limited' });
    expect(await goaway).toBe(http2.constants.NGHTTP2_NO_ERROR);
    await closed(session);
  });
});
