import fc from 'fast-check';
import { ApprovalPolicy, GrantFacts, PolicyContext } from './approval-policy';
import { PolicyDocument } from './policy-document';
import {
  MAX_SIMULATION_MATCHES,
  SimulationCall,
  SimulationInputs,
  simulatePolicy,
  simulationMatches,
} from './policy-simulation';
import { SUPERVISION_LEVELS } from './supervision-level';

const NOW = new Date('2025-03-01T12:00:00.000Z');
const conversation: PolicyContext['conversation'] = { id: 'c1', agentId: 'bot', user: { id: 'ann', roles: ['admin'] } };
const current = PolicyDocument.parse({
  rules: [
    { match: 'get_*', level: 'automatic' },
    { match: 'delete_*', level: 'confirm' },
  ],
});

function inputs(candidate: unknown, extra: Partial<SimulationInputs> = {}): SimulationInputs {
  return {
    current: { document: current, version: 4 },
    candidate: PolicyDocument.parse(candidate),
    tools: new Map(),
    grants: [],
    now: NOW,
    ...extra,
  };
}

describe('simulatePolicy', () => {
  it('judges a given call by the policy in force (then) and by the candidate (now), and marks a changed level', () => {
    const calls: SimulationCall[] = [{ call: { toolName: 'delete_source', arguments: {} }, conversation }];
    const { results, summary } = simulatePolicy(calls, inputs({ rules: [{ match: 'delete_*', level: 'deny' }] }));
    expect(results).toEqual([
      {
        then: { level: 'confirm', rule: 1, policyVersion: 4, reason: 'Rule 1 (delete_*): confirm', source: 'current' },
        now: { level: 'deny', rule: 0, reason: 'Denied by policy rule 0 (delete_*)' },
        changed: true,
      },
    ]);
    expect(summary).toEqual({ total: 1, changed: 1, transitions: [{ then: 'confirm', now: 'deny', count: 1 }] });
  });

  it('keeps what a recorded call got when proposed as its then, whatever the policy in force says now', () => {
    const recorded = {
      level: 'automatic' as const,
      rule: null,
      policyVersion: 1,
      reason: 'Tool flags: no flags set → automatic',
    };
    const { results } = simulatePolicy(
      [{ call: { toolName: 'delete_source', arguments: {} }, conversation, recorded }],
      inputs({ rules: [{ match: 'delete_*', level: 'automatic' }] }),
    );
    expect(results[0].then).toEqual({ ...recorded, source: 'recorded' });
    expect(results[0].now.level).toBe('automatic');
    expect(results[0].changed).toBe(false);
  });

  it('counts an equal level with another rule as unchanged', () => {
    const { results, summary } = simulatePolicy(
      [{ call: { toolName: 'get_x', arguments: {} }, conversation }],
      inputs({ rules: [{ match: '*', level: 'automatic' }] }),
    );
    expect(results[0]).toMatchObject({ then: { rule: 0 }, now: { rule: 0, level: 'automatic' }, changed: false });
    expect(summary).toEqual({ total: 1, changed: 0, transitions: [{ then: 'automatic', now: 'automatic', count: 1 }] });
  });

  it('sees the registry and the standing grants it is given, as proposals do', () => {
    const grant: GrantFacts = { id: 'g1', toolName: 'send_email', scope: 'tenant' };
    const tools = new Map([['send_email', { flags: { destructive: true }, registeredBy: 'admin' as const }]]);
    const call: SimulationCall = { call: { toolName: 'send_email', arguments: {} }, conversation };
    expect(simulatePolicy([call], inputs({ rules: [] }, { tools })).results[0].now).toMatchObject({ level: 'confirm' });
    expect(simulatePolicy([call], inputs({ rules: [] }, { tools, grants: [grant] })).results[0].now).toMatchObject({
      level: 'automatic',
      reason: expect.stringContaining('g1'),
    });
  });

  it("judges requireRole by the conversation's user: a call without a user is denied", () => {
    const candidate = { rules: [{ match: 'delete_*', level: 'confirm', requireRole: 'admin' }] };
    const withUser = simulatePolicy(
      [{ call: { toolName: 'delete_a', arguments: {} }, conversation }],
      inputs(candidate),
    );
    const withoutUser = simulatePolicy(
      [{ call: { toolName: 'delete_a', arguments: {} }, conversation: { id: '', agentId: '' } }],
      inputs(candidate),
    );
    expect(withUser.results[0].now.level).toBe('confirm');
    expect(withoutUser.results[0].now).toMatchObject({
      level: 'deny',
      reason: 'Permission denied: admin role required',
    });
  });

  it('summarises every call once, orders transitions strictest first, and agrees with ApprovalPolicy call by call', () => {
    const level = fc.constantFrom(...SUPERVISION_LEVELS);
    const name = fc.constantFrom('get_a', 'delete_b', 'shell', 'other');
    fc.assert(
      fc.property(
        fc.array(fc.record({ match: fc.constantFrom('get_*', 'delete_*', '*', 'shell'), level }), { maxLength: 5 }),
        fc.array(name, { maxLength: 30 }),
        (rules, names) => {
          const candidate = PolicyDocument.parse({ rules });
          const calls = names.map((toolName): SimulationCall => ({ call: { toolName, arguments: {} }, conversation }));
          const { results, summary } = simulatePolicy(calls, {
            current: { document: current, version: 4 },
            candidate,
            tools: new Map(),
            grants: [],
            now: NOW,
          });
          expect(summary.total).toBe(calls.length);
          expect(summary.transitions.reduce((n, t) => n + t.count, 0)).toBe(calls.length);
          expect(summary.changed).toBe(results.filter((r) => r.then.level !== r.now.level).length);
          const order = summary.transitions.map(
            (t) => SUPERVISION_LEVELS.indexOf(t.then) * 10 + SUPERVISION_LEVELS.indexOf(t.now),
          );
          expect(order).toEqual([...order].sort((a, b) => a - b));
          calls.forEach((c, i) =>
            expect(results[i].now.level).toBe(
              ApprovalPolicy.evaluate(c.call, {
                policy: candidate,
                policyVersion: 4,
                grants: [],
                conversation,
                now: NOW,
              }).level,
            ),
          );
        },
      ),
    );
  });
});

describe("the bound on a simulation's matching work", () => {
  const levels = ['automatic', 'notify', 'confirm', 'manual'] as const;
  /** `n` shell rules on Bash, and a command of `parts` simple commands. */
  const rules = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ match: `Bash(command=*x${i}*)`, level: levels[i % 4] }));
  const command = (parts: number) => Array.from({ length: parts }, (_, i) => `c${i} a`).join('; ');
  const calls = (n: number, parts: number): SimulationCall[] =>
    Array.from({ length: n }, () => ({
      call: { toolName: 'Bash', arguments: { command: command(parts) } },
      conversation,
    }));

  it('counts, per call and per document judged, its rules on the tool by the whole call and each part of its commands', () => {
    expect(simulationMatches(calls(3, 4), inputs({ rules: rules(10) }))).toBe(3 * 10 * 5);
    // A recorded call is judged by the candidate only; a call whose tool no rule names costs nothing.
    const recorded = { level: 'automatic' as const, rule: null, policyVersion: 1, reason: 'x' };
    expect(
      simulationMatches(
        calls(3, 4).map((c) => ({ ...c, recorded })),
        inputs({ rules: rules(10) }),
      ),
    ).toBe(3 * 10 * 5);
    expect(
      simulationMatches(
        [{ call: { toolName: 'other', arguments: { command: command(4) } }, conversation }],
        inputs({ rules: rules(10) }),
      ),
    ).toBe(0);
  });

  it("refuses, with validation_failed on calls, what an auditor's 600 globs × 40 calls × 240-part commands would cost", () => {
    const doc = { rules: rules(600) };
    const heavy = calls(40, 240);
    expect(
      simulationMatches(heavy, inputs(doc, { current: { document: PolicyDocument.parse(doc), version: 4 } })),
    ).toBeGreaterThan(MAX_SIMULATION_MATCHES);
    let thrown: unknown;
    try {
      simulatePolicy(heavy, inputs(doc, { current: { document: PolicyDocument.parse(doc), version: 4 } }));
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toMatchObject({
      code: 'validation_failed',
      faults: [{ path: 'calls', message: expect.stringContaining(`more than ${MAX_SIMULATION_MATCHES}`) }],
    });
  });

  it('names limit for recorded calls, and judges a simulation within the bound', () => {
    const recorded = { level: 'automatic' as const, rule: null, policyVersion: 1, reason: 'x' };
    const heavy = calls(40, 240).map((c) => ({ ...c, recorded }));
    expect(() => simulatePolicy(heavy, inputs({ rules: rules(600) }))).toThrow(
      expect.objectContaining({ faults: [expect.objectContaining({ path: 'limit' })] }),
    );
    expect(simulatePolicy(calls(40, 240), inputs({ rules: rules(20) })).summary.total).toBe(40);
  });
});
