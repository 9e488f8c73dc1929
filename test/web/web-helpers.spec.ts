/** Pure helpers of the web inbox: the SSE frame parser, the JSON editor's check, durations. */
import { duration, parseArguments, timeLeft } from '../../web/src/format';
import { parseFrames } from '../../web/src/sse';

describe('parseFrames', () => {
  it('splits complete frames, keeps the incomplete rest, and reads comments and retry', () => {
    const r = parseFrames('retry: 3000\n: stream of tenant t after event 41\n\nid: 42\nevent: ToolCallApproved\ndata: {"seq":42}\n\nid: 43\nevent: X\ndata: {"se');
    expect(r.retry).toBe(3000);
    expect(r.comments).toEqual(['stream of tenant t after event 41']);
    expect(r.frames).toEqual([{ id: '42', event: 'ToolCallApproved', data: '{"seq":42}' }]);
    expect(r.rest).toBe('id: 43\nevent: X\ndata: {"se');
  });

  it('joins multi-line data and accepts CRLF line ends', () => {
    expect(parseFrames('data: a\r\ndata: b\r\n\r\n').frames).toEqual([{ id: undefined, event: 'message', data: 'a\nb' }]);
  });

  it('a heartbeat comment alone is no frame', () => {
    expect(parseFrames(': keep-alive\n\n')).toEqual({ frames: [], comments: ['keep-alive'], retry: undefined, rest: '' });
  });
});

describe('parseArguments', () => {
  it('accepts a JSON object', () => {
    expect(parseArguments('{"id": "src_2", "n": [1, 2]}')).toEqual({ ok: true, value: { id: 'src_2', n: [1, 2] } });
  });

  it.each([['{"id": '], ['[1, 2]'], ['"text"'], ['null'], ['']])('refuses %j', (text) => {
    expect(parseArguments(text).ok).toBe(false);
  });
});

describe('durations', () => {
  it('read as a person would say them', () => {
    expect(duration(12_400)).toBe('12 s');
    expect(duration(245_000)).toBe('4 min 05 s');
    expect(duration(80 * 60_000)).toBe('1 h 20 min');
    expect(timeLeft('2025-01-01T10:05:00.000Z', Date.parse('2025-01-01T10:00:00.000Z'))).toBe('5 min 00 s left');
    expect(timeLeft('2025-01-01T10:05:00.000Z', Date.parse('2025-01-01T10:06:00.000Z'))).toBe('expiring…');
  });
});
