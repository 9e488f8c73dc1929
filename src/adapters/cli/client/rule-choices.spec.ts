import fc from 'fast-check';
import { reasonFrom, reasonMenu, ruleRefusal } from './rule-choices';

const call = (approval: Record<string, unknown>) => ({ approval });

describe("the terminal offers what the call's rule allows", () => {
  it('refuses a decision outside allowedDecisions, and allows all without them', () => {
    const a = call({ allowedDecisions: ['approve', 'reject'] });
    expect(ruleRefusal(a, 'approve')).toBeUndefined();
    expect(ruleRefusal(a, 'edit')).toBe("this call's rule does not allow an edit (it allows: approve, reject)");
    expect(ruleRefusal(a, 'always_allow')).toContain('always allow');
    expect(ruleRefusal(call({}), 'edit')).toBeUndefined();
  });

  it('offers reasons as a numbered choice; a number or the exact text picks one', () => {
    const a = call({ rejectReasons: ['Duplicate', 'Wrong amount'] });
    expect(reasonMenu(a)).toBe('1 Duplicate · 2 Wrong amount');
    expect(reasonFrom(a, '2')).toEqual({ reason: 'Wrong amount' });
    expect(reasonFrom(a, ' Duplicate ')).toEqual({ reason: 'Duplicate' });
    expect(reasonFrom(a, '3')).toEqual({ error: 'choose a reason by its number, 1 to 2' });
    expect(reasonFrom(a, '')).toHaveProperty('error');
    expect(reasonFrom(a, 'my words')).toHaveProperty('error');
  });

  it('takes one’s own words only with rejectFreeText; without reasons, the text as typed', () => {
    const free = call({ rejectReasons: ['Duplicate'], rejectFreeText: true });
    expect(reasonMenu(free)).toBe('1 Duplicate · or type your own');
    expect(reasonFrom(free, 'my words')).toEqual({ reason: 'my words' });
    expect(reasonFrom(call({}), 'not today')).toEqual({ reason: 'not today' });
    expect(reasonFrom(call({}), '  ')).toEqual({});
  });

  it('property: whatever is typed, a reason given is one of the list unless free text is allowed', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1 }), { minLength: 1, maxLength: 5 }),
        fc.string(),
        fc.boolean(),
        (reasons, typed, freeText) => {
          const r = reasonFrom(call({ rejectReasons: reasons, rejectFreeText: freeText }), typed);
          if ('reason' in r && r.reason !== undefined && !freeText) expect(reasons).toContain(r.reason);
          if ('reason' in r) expect(r.reason).toBeDefined();
        },
      ),
    );
  });
});
