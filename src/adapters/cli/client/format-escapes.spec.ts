import { ProblemError, CliError } from './api-client';
import { reportError } from './client-commands';
import { oneLine, table } from './format';

describe("the CLI's tables and one-line output and agent text with control characters", () => {
  const bad = 'x\x1b[8m\u009b2J\u202e\r\nend';

  it('tables show cells on one line with no control characters (tollgate pending, questions, audit, grants)', () => {
    const out = table(['TOOL', 'REASON'], [[`wire${bad}`, `why${bad}`]]);
    expect(out).toContain('wirex[8m2J end');
    for (const c of ['\x1b', '\u009b', '\u202e', '\r']) expect(out).not.toContain(c);
    expect(out.split('\n')).toHaveLength(2);
  });

  it('oneLine cleans a string and writes other values as JSON with C1 and bidi escaped', () => {
    expect(oneLine(`a${bad}`, 200)).toBe('ax[8m2J↵end');
    expect(oneLine({ to: 'IBAN\u202e\u009b' }, 200)).toBe('{"to":"IBAN\\u202e\\u009b"}');
  });

  it("errors quoting the server's problem detail reach stderr without control characters", () => {
    const written: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
      written.push(String(s));
      return true;
    });
    try {
      reportError(new ProblemError(400, { code: 'invalid_request', detail: `tool${bad}` } as never));
      reportError(new CliError(`tool${bad}`, 2));
    } finally {
      spy.mockRestore();
    }
    expect(written).toEqual(['invalid_request: toolx[8m2J↵end\n', 'tollgate: toolx[8m2J↵end\n']);
  });
});
