/** The inbox's event-stream client against a fetch stand-in: what it reports while connected and while away. */
import { Tollgate } from '@tollgate/sdk';
import { openStream, StreamStatus } from '../../web/src/sse';

const realFetch = global.fetch;
afterEach(() => {
  global.fetch = realFetch;
  jest.useRealTimers();
});

/** A stream response the test writes into and ends. */
function streamResponse(): { response: Response; write(text: string): void; end(): void } {
  let push!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (push = c) });
  return {
    response: new Response(body, { status: 200 }),
    write: (t) => push.enqueue(new TextEncoder().encode(t)),
    end: () => push.close(),
  };
}

function open(states: StreamStatus[]) {
  // Same origin, as in the page: the stand-in fetch sees the path alone.
  return openStream({
    tollgate: new Tollgate({ url: '', token: 't' }),
    onOpen: () => undefined,
    onEvent: () => undefined,
    onState: (s) => states.push(s),
    onRefused: () => undefined,
  });
}

describe('the event stream client', () => {
  it('reports when it drops, when it will try again and when it last heard the server; resumes from the last event', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const first = streamResponse();
    const headers: Array<Record<string, string>> = [];
    global.fetch = jest.fn(async (_url: unknown, init?: RequestInit) => {
      headers.push(init!.headers as Record<string, string>);
      return headers.length === 1 ? first.response : new Response('down', { status: 503 });
    }) as typeof fetch;
    const states: StreamStatus[] = [];
    const stream = open(states);
    await jest.advanceTimersByTimeAsync(0);
    expect(states.map((s) => s.state)).toEqual(['connecting', 'live']);

    await jest.advanceTimersByTimeAsync(5000);
    first.write('retry: 3000\n: stream after event 7\n\nid: 8\ndata: {}\n\n');
    await jest.advanceTimersByTimeAsync(0);
    first.end();
    await jest.advanceTimersByTimeAsync(0);
    const dropped = states[states.length - 1];
    expect(dropped.state).toBe('reconnecting');
    expect(dropped.heardAt).toBe(1_005_000);
    expect(dropped.retryAt! - 1_005_000).toBeGreaterThanOrEqual(2400); // the server's retry, with jitter
    expect(dropped.retryAt! - 1_005_000).toBeLessThanOrEqual(3600);

    await jest.advanceTimersByTimeAsync(3600);
    expect(headers[1]['last-event-id']).toBe('8');
    stream.close();
  });

  it('tries again at once when asked to, instead of waiting out the backoff', async () => {
    jest.useFakeTimers();
    global.fetch = jest.fn(async () => new Response('down', { status: 503 })) as typeof fetch;
    const states: StreamStatus[] = [];
    const stream = open(states);
    await jest.advanceTimersByTimeAsync(0);
    expect(global.fetch).toHaveBeenCalledTimes(1);
    expect(states[states.length - 1]).toMatchObject({ state: 'reconnecting', retryAt: expect.any(Number) });

    stream.retryNow(); // no time passes: only the button can have started the second attempt
    await jest.advanceTimersByTimeAsync(0);
    expect(global.fetch).toHaveBeenCalledTimes(2);
    stream.close();
  });
});
