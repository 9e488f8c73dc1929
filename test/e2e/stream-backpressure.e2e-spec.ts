import { randomBytes } from 'node:crypto';
import { connect, Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { EventFeed } from '../../src/infrastructure/streaming/event-feed';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { until } from '../support/wait';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The server runs in this process: its heap (and its Buffers) are ours to measure, after a full collection. */
function heldBytes(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const MAX_BUFFER = 256 * 1024;
const STALLED = 8;

interface StalledReader {
  socket: Socket;
  /** What came with the response head, before the client stopped reading. */
  first: string;
}

/**
 * A client that opens the stream and then reads nothing: it takes the response head, then stops reading, so what
 * the server sends piles up in the kernel's buffers and then in the server's. HTTP/1.0, so the body is plain SSE.
 */
function stalledReader(url: URL, token: string, query: string): Promise<StalledReader> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    socket.once('error', reject);
    socket.write(
      `GET /v1/events/stream${query} HTTP/1.0\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    );
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      const text = chunk.toString('utf8');
      const body = text.indexOf('\r\n\r\n');
      if (!text.startsWith('HTTP/1.1 200') || body < 0) reject(new Error(`stream refused: ${text.split('\r\n')[0]}`));
      else resolve({ socket, first: text.slice(body + 4) });
    });
  });
}

/** Reads SSE text as it comes and checks that the ids run without a gap or a repeat, up to `last`. */
function idChecker(after: number, last: number) {
  let expected = after + 1;
  let rest = '';
  return {
    /** The id of the last whole frame read. */
    get lastId(): number {
      return expected - 1;
    },
    /** True once `last` has arrived. */
    feed(text: string): boolean {
      rest += text;
      let cut: number;
      while ((cut = rest.indexOf('\n\n')) >= 0) {
        const block = rest.slice(0, cut);
        rest = rest.slice(cut + 2);
        const id = /^id: (\d+)$/m.exec(block)?.[1];
        if (id === undefined) continue;
        if (Number(id) !== expected) throw new Error(`event ${id} arrived where ${expected} was due`);
        expected += 1;
      }
      return expected > last;
    },
  };
}

/** Lets a stalled reader go on reading, and resolves once it has every event up to `last`, in order. */
function readToEnd({ socket, first }: StalledReader, after: number, last: number): Promise<void> {
  const ids = idChecker(after, last);
  const decoder = new TextDecoder();
  return new Promise((resolve, reject) => {
    const feed = (text: string) => {
      try {
        if (ids.feed(text)) resolve();
      } catch (e) {
        reject(e);
      }
    };
    feed(first);
    socket.on('data', (chunk: Buffer) => feed(decoder.decode(chunk, { stream: true })));
    socket.once('close', () => reject(new Error('the stream closed before the last event')));
    socket.resume();
  });
}

/** Event streams write with backpressure: clients that do not read cannot make the server hold their backlog. */
describe('event stream backpressure', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  const stalled: StalledReader[] = [];

  beforeAll(async () => {
    server = await startTestServer({ streamMaxBufferBytes: MAX_BUFFER, streamPollMs: 200 });
    api = client(server.url);
  });
  afterAll(async () => {
    for (const s of stalled) s.socket.destroy();
    await server.stop();
  });

  it('keeps memory bounded and serving while clients that never read stream a large backlog', async () => {
    const url = new URL(server.url);
    const admin = await server.token('ada', ['admin'], { tenant: 'flood' });
    const agent = await server.token('bot', ['agent'], { tenant: 'flood' });
    const before = heldBytes();

    // Half the stalled readers follow the stream live while the backlog is written…
    for (let i = 0; i < STALLED / 2; i++) stalled.push(await stalledReader(url, admin, ''));

    // …about 28 MB of events through the real proposal path: 32 steps of 64 calls, each with 14 KB of arguments.
    for (let c = 0; c < 32; c++) {
      await api.post('/v1/conversations', agent, { id: `big-${c}` });
      const toolCalls = Array.from({ length: 64 }, () => ({
        toolName: 'upload_blob',
        arguments: { blob: randomBytes(10_500).toString('base64') },
      }));
      const r = await api.post(`/v1/conversations/big-${c}/tool-calls`, agent, { toolCalls });
      expect(r.status).toBe(201);
    }
    const [{ seq }] = await server.dataSource.query(`SELECT seq FROM audit_heads WHERE tenant_id = 'flood'`);
    const last = Number(seq);

    // …and half ask for all of it from the start.
    for (let i = 0; i < STALLED / 2; i++) stalled.push(await stalledReader(url, admin, '?lastEventId=0'));

    // A client that does read gets every event, in order; by then the stalled ones have been offered theirs.
    const reader = await fetch(`${server.url}/v1/events/stream?lastEventId=0`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(reader.status).toBe(200);
    const ids = idChecker(0, last);
    const decoder = new TextDecoder();
    for await (const chunk of reader.body as unknown as AsyncIterable<Uint8Array>) {
      if (ids.feed(decoder.decode(chunk, { stream: true }))) break;
    }

    // Before backpressure each stalled stream held what the kernel would not take of the ~28 MB: hundreds of MB in all.
    const grown = heldBytes() - before;
    expect(grown).toBeLessThan(STALLED * MAX_BUFFER * 4 + 48 * 1024 * 1024);

    // Still serving.
    expect((await api.get('/health/live')).status).toBe(200);
    await api.post('/v1/conversations', agent, { id: 'after' });
    const r = await api.post('/v1/conversations/after/tool-calls', agent, {
      toolCalls: [{ toolName: 'get_weather', arguments: { city: 'Oslo' } }],
    });
    expect(r.status).toBe(201);

    // A stalled reader that starts reading again gets the rest of its backlog, without a gap, and what came after.
    const [{ seq: now }] = await server.dataSource.query(`SELECT seq FROM audit_heads WHERE tenant_id = 'flood'`);
    await readToEnd(stalled[stalled.length - 1], 0, Number(now));
    for (const s of stalled.splice(0)) s.socket.destroy();
  }, 120_000);

  it('drops a client that takes nothing of its full buffer, and it resumes with Last-Event-ID', async () => {
    const feed = server.app.get(EventFeed);
    await until(() => feed.openStreams === 0, 10_000, 'the streams of the test before closed');
    const admin = await server.token('ada', ['admin'], { tenant: 'flood' });
    const [{ seq }] = await server.dataSource.query(`SELECT seq FROM audit_heads WHERE tenant_id = 'flood'`);
    const last = Number(seq);
    const reader = await stalledReader(new URL(server.url), admin, '?lastEventId=0');
    stalled.push(reader);
    expect(feed.openStreams).toBe(1);
    // Its buffer fills, and then it takes nothing: the server lets it go (after 20 s) rather than hold it.
    await until(() => feed.openStreams === 0, 60_000, 'the stalled stream dropped');

    // What the client still finds in its socket is a whole prefix of the backlog, and then the end.
    const ids = idChecker(0, last);
    const decoder = new TextDecoder();
    ids.feed(reader.first);
    await new Promise<void>((resolve) => {
      reader.socket.on('data', (chunk: Buffer) => ids.feed(decoder.decode(chunk, { stream: true })));
      reader.socket.once('close', () => resolve());
      reader.socket.on('error', () => undefined);
      reader.socket.resume();
    });
    const got = ids.lastId;
    expect(got).toBeLessThan(last);

    // Reconnecting with Last-Event-ID carries on from there, without a gap, to the end.
    const again = await fetch(`${server.url}/v1/events/stream`, {
      headers: { authorization: `Bearer ${admin}`, 'last-event-id': String(got) },
    });
    const rest = idChecker(got, last);
    for await (const chunk of again.body as unknown as AsyncIterable<Uint8Array>) {
      if (rest.feed(decoder.decode(chunk, { stream: true }))) break;
    }
    expect(rest.lastId).toBeGreaterThanOrEqual(last);
  }, 120_000);
});
