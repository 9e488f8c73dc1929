import { ValidationError } from '../../../domain/shared/domain-error';
import { DecideToolCallCommand, GrantOptions } from './decide-tool-call.command';
import type { DecisionInput } from '../../../domain/conversation/conversation.aggregate';

/** The faults mustFit throws, or [] when the fields fit the decision. */
function faults(input: DecisionInput, grant: GrantOptions = {}) {
  try {
    DecideToolCallCommand.mustFit(input, grant);
    return [];
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    return e.faults;
  }
}

const approveOnly = (path: string) => [{ path, message: 'is allowed with decision "approve" only' }];
const alwaysAllowOnly = (path: string) => [
  { path, message: 'is allowed with decision "always_allow" or "always_reject" only' },
];

describe('the fields a decision may carry, whichever way it comes in (REST, gRPC, Slack, the terminal)', () => {
  it('edited arguments go with approve only', () => {
    expect(faults({ decision: 'approve', arguments: { id: 1 } })).toEqual([]);
    expect(faults({ decision: 'reject', arguments: { id: 1 } })).toEqual(approveOnly('arguments'));
    expect(faults({ decision: 'always_allow', arguments: { id: 1 } })).toEqual(approveOnly('arguments'));
  });

  it('scope, expiresIn and args go with always_allow only, and the first misplaced one is named', () => {
    expect(faults({ decision: 'reject', scope: 'tenant' })).toEqual(alwaysAllowOnly('scope'));
    expect(faults({ decision: 'approve' }, { expiresIn: 60 })).toEqual(alwaysAllowOnly('expiresIn'));
    expect(faults({ decision: 'approve' }, { args: { cmd: 'ls *' } })).toEqual(alwaysAllowOnly('args'));
    expect(faults({ decision: 'approve' }, { expiresIn: 60, args: { cmd: 'ls *' } })).toEqual(
      alwaysAllowOnly('expiresIn'),
    );
  });

  it('an always_allow with a scope, a lifetime and argument globs fits', () => {
    expect(faults({ decision: 'always_allow', scope: 'agent' }, { expiresIn: 86400, args: { cmd: 'ls *' } })).toEqual(
      [],
    );
  });

  it("a grant's lifetime is 1 s to 90 days, and its globs must be ones a grant can hold", () => {
    expect(faults({ decision: 'always_allow' }, { expiresIn: 0 })).toEqual([
      { path: 'expiresIn', message: expect.stringContaining('must be') },
    ]);
    expect(faults({ decision: 'always_allow' }, { args: { cmd: 7 as unknown as string } })).toEqual([
      expect.objectContaining({ path: 'args.cmd' }),
    ]);
  });

  it('respond needs its response (at most 4,000 characters); uses go with always_allow, 1 to 1,000', () => {
    expect(faults({ decision: 'respond' })).toEqual([
      { path: 'response', message: 'is required with decision "respond": what the agent is told instead' },
    ]);
    expect(faults({ decision: 'respond', response: 'x'.repeat(4001) })[0].path).toBe('response');
    expect(faults({ decision: 'reject', response: 'hi' })[0].path).toBe('response');
    expect(faults({ decision: 'respond', response: 'use staging' })).toEqual([]);
    expect(faults({ decision: 'always_allow' }, { uses: 1 })).toEqual([]);
    expect(faults({ decision: 'approve' }, { uses: 1 })[0].path).toBe('uses');
    expect(faults({ decision: 'always_allow' }, { uses: 0 })[0].path).toBe('uses');
    expect(faults({ decision: 'always_reject', scope: 'agent' }, { expiresIn: 60, args: { cmd: 'rm *' } })).toEqual([]);
  });
});
