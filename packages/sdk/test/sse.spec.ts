import fc from 'fast-check';
import { SseParser, type SseItem } from '@tollgate/sdk';

/** Feeds `text` to a fresh parser in the given pieces and collects what it reports. */
function parse(pieces: string[], max?: number): SseItem[] {
  const p = new SseParser(max);
  return pieces.flatMap((piece) => p.push(piece));
}

describe('SseParser (text/event-stream)', () => {
  it('joins multi-line data with newlines and dispatches on a blank line, with the event type and id', () => {
    expect(parse(['id: 7\nevent: ToolCallApproved\ndata: {"a":\ndata:1}\n\n'])).toEqual([
      { kind: 'event', id: '7', event: 'ToolCallApproved', data: '{"a":\n1}' },
    ]);
  });

  it('accepts CRLF, LF and CR line ends, a CRLF split across chunks counting once', () => {
    const expected = [
      { kind: 'event', event: 'message', data: 'one' },
      { kind: 'event', event: 'message', data: 'two' },
    ];
    expect(parse(['data: one\r\n\r\ndata: two\r\n\r\n'])).toEqual(expected);
    expect(parse(['data: one\r', '\n\r', '\ndata: two\r\r'])).toEqual(expected);
    expect(parse(['data: one\r\rdata: two\n\n'])).toEqual(expected);
  });

  it('keeps the last event id for later events, ignores an id holding NUL, and reports retry and comments', () => {
    expect(
      parse([
        ': stream of tenant t after event 3\nretry: 3000\n\nid: 4\ndata: a\n\ndata: b\n\nid: 5\0\ndata: c\n\nretry: soon\n\n',
      ]),
    ).toEqual([
      { kind: 'comment', text: 'stream of tenant t after event 3' },
      { kind: 'retry', ms: 3000 },
      { kind: 'event', id: '4', event: 'message', data: 'a' },
      { kind: 'event', id: '4', event: 'message', data: 'b' },
      { kind: 'event', id: '4', event: 'message', data: 'c' },
    ]);
  });

  it('does not dispatch an event without data, and forgets its type', () => {
    expect(parse(['event: Nothing\nid: 9\n\ndata: x\n\n'])).toEqual([
      { kind: 'event', id: '9', event: 'message', data: 'x' },
    ]);
  });

  it('treats a field without a colon as empty, and strips one space after the colon only', () => {
    expect(parse(['data\ndata:  two spaces\n\n'])).toEqual([
      { kind: 'event', event: 'message', data: '\n two spaces' },
    ]);
  });

  it('gives the same items however the stream is cut into chunks', () => {
    const frame = fc.record({
      id: fc.option(fc.integer({ min: 0, max: 1e6 }).map(String), { nil: undefined }),
      type: fc.constantFrom('ToolCallApproved', 'ApprovalRequested'),
      lines: fc.array(
        fc.string().filter((s) => !/[\r\n]/.test(s)),
        { minLength: 1, maxLength: 3 },
      ),
    });
    const eol = fc.constantFrom('\n', '\r\n', '\r');
    fc.assert(
      fc.property(
        fc.array(fc.tuple(frame, eol), { minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (frames, cuts) => {
          const text = frames
            .map(
              ([f, e]) =>
                [
                  ...(f.id !== undefined ? [`id: ${f.id}`] : []),
                  `event: ${f.type}`,
                  ...f.lines.map((l) => `data: ${l}`),
                  '',
                ].join(e) + e,
            )
            .join('');
          const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
          const pieces = [0, ...points, text.length]
            .slice(1)
            .map((end, i, all) => text.slice(i === 0 ? 0 : all[i - 1], end));
          expect(parse(pieces)).toEqual(parse([text]));
          expect(parse([text]).filter((i) => i.kind === 'event')).toHaveLength(frames.length);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses a frame larger than its bound instead of buffering without end', () => {
    const p = new SseParser(1000);
    expect(() => p.push(`data: ${'x'.repeat(2000)}`)).toThrow(RangeError);
    const q = new SseParser(1000);
    expect(() => {
      for (let i = 0; i < 20; i++) q.push(`data: ${'y'.repeat(100)}\n`);
    }).toThrow(RangeError);
  });
});
