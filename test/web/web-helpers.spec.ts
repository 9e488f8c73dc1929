/** Pure helpers of the web inbox: the JSON editor's check, durations (the SSE parser is the SDK's, tested there). */
import { channelName, decidedBy, duration, parseArguments, timeLeft } from '../../web/src/format';

describe('parseArguments', () => {
  it('accepts a JSON object', () => {
    expect(parseArguments('{"id": "src_2", "n": [1, 2]}')).toEqual({ ok: true, value: { id: 'src_2', n: [1, 2] } });
  });

  it.each([['{"id": '], ['[1, 2]'], ['"text"'], ['null'], ['']])('refuses %j', (text) => {
    expect(parseArguments(text).ok).toBe(false);
  });
});

describe('channelName', () => {
  it('names every channel a decision may come from, in words', () => {
    expect(['web', 'slack', 'cli', 'api', 'grpc', 'mcp', 'policy', 'system'].map(channelName)).toEqual([
      'the web inbox',
      'Slack',
      'the CLI',
      'the API',
      'gRPC',
      'an MCP chat',
      'policy',
      'the system',
    ]);
    expect([channelName(undefined), channelName('carrier-pigeon')]).toEqual(['an unknown channel', 'carrier-pigeon']);
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

describe('decidedBy', () => {
  it('names who decided, where, and for whom when a delegate decided', () => {
    expect(decidedBy({ id: 'ann', name: 'Ann', via: 'slack' }, 'bob')).toBe('by Ann via Slack');
    expect(decidedBy({ id: 'bob', name: 'Bob', via: 'email', onBehalfOf: { id: 'ann', name: 'Ann' } }, 'carl')).toMatch(
      /^by Bob for Ann via /,
    );
    expect(decidedBy({ id: 'bob', via: 'web', onBehalfOf: { id: 'ann' } }, 'ann')).toMatch(/^by bob for you via /);
    expect(decidedBy({ id: 'policy', via: 'policy' }, 'ann')).toBe('by policy');
  });
});
