import { TOOL_CALL_STATUSES, ToolCallStatus, canMove, isTerminal } from './tool-call-status';

/** CONTRACT §6, written out independently of the implementation's table. */
const LEGAL: ReadonlyArray<[ToolCallStatus, ToolCallStatus]> = [
  ['pending', 'approved'],
  ['pending', 'rejected'],
  ['pending', 'expired'],
  ['pending', 'cancelled'],
  ['approved', 'executed'],
  ['approved', 'cancelled'],
  ['executed', 'completed'],
];
const TERMINAL: readonly ToolCallStatus[] = ['rejected', 'expired', 'cancelled', 'completed'];

const isLegal = (from: ToolCallStatus, to: ToolCallStatus) => LEGAL.some(([f, t]) => f === from && t === to);
const allPairs = TOOL_CALL_STATUSES.flatMap((from) =>
  TOOL_CALL_STATUSES.map((to) => [from, to] as [ToolCallStatus, ToolCallStatus]),
);

describe('the tool call status table', () => {
  it('knows exactly the seven statuses of the contract', () => {
    expect([...TOOL_CALL_STATUSES].sort()).toEqual([
      'approved',
      'cancelled',
      'completed',
      'executed',
      'expired',
      'pending',
      'rejected',
    ]);
  });

  it('covers all 49 pairs of statuses', () => {
    expect(allPairs).toHaveLength(49);
  });

  describe.each(allPairs.filter(([f, t]) => isLegal(f, t)))('a call that is %s', (from, to) => {
    it(`may move to ${to}`, () => {
      expect(canMove(from, to)).toBe(true);
    });
  });

  describe.each(allPairs.filter(([f, t]) => !isLegal(f, t)))('a call that is %s', (from, to) => {
    it(`may never move to ${to}`, () => {
      expect(canMove(from, to)).toBe(false);
    });
  });

  it('allows exactly seven transitions in all', () => {
    expect(allPairs.filter(([f, t]) => canMove(f, t))).toEqual(allPairs.filter(([f, t]) => isLegal(f, t)));
  });

  it('never lets a status move to itself', () => {
    for (const s of TOOL_CALL_STATUSES) expect(canMove(s, s)).toBe(false);
  });

  it('never lets a call return to pending', () => {
    for (const s of TOOL_CALL_STATUSES) expect(canMove(s, 'pending')).toBe(false);
  });

  it.each(TOOL_CALL_STATUSES.map((s) => [s, TERMINAL.includes(s)] as const))(
    'treats %s as terminal: %s',
    (status, terminal) => {
      expect(isTerminal(status)).toBe(terminal);
    },
  );

  it('lets a call reach executed only from approved', () => {
    expect(TOOL_CALL_STATUSES.filter((s) => canMove(s, 'executed'))).toEqual(['approved']);
  });
});
