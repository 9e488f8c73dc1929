import { ValidationError } from '../shared/domain-error';
import { ApprovalPolicy, GrantFacts, PolicyContext, ProposedCallFacts, ToolFlags } from './approval-policy';
import type { PolicyDocument } from './policy-document';
import { splitShellCommand } from './shell-command';
import { SupervisionLevel, strictness } from './supervision-level';

/**
 * The most rule-by-part matches one simulation may ask for (see `simulationMatches`). Matching runs on the event
 * loop: 600 globs × 40 calls × 240-part commands held it for seconds; this bound keeps a request near 0.1–0.2 s.
 */
export const MAX_SIMULATION_MATCHES = 500_000;

/** A verdict as the simulation shows it. */
export interface SimulatedVerdict {
  level: SupervisionLevel;
  rule: number | null;
  reason: string;
}

/** One call to judge again: a recorded one carries what it got then; a given one is judged by the current policy. */
export interface SimulationCall {
  call: ProposedCallFacts;
  conversation: PolicyContext['conversation'];
  recorded?: SimulatedVerdict & { policyVersion: number };
}

/** What both policies see besides the call: the registry and the standing grants (as they are now). */
export interface SimulationInputs {
  current: { document: PolicyDocument; version: number };
  candidate: PolicyDocument;
  tools: ReadonlyMap<string, { flags: ToolFlags; registeredBy: 'admin' | 'agent' }>;
  grants: readonly GrantFacts[];
  /** The instant both judge at: a grant expired by then covers nothing. */
  now: Date;
}

export interface SimulationResult {
  /** What the call got when proposed (`recorded`), or what the current policy gives it now (`current`). */
  then: SimulatedVerdict & { policyVersion: number; source: 'recorded' | 'current' };
  /** What the candidate document gives it now. */
  now: SimulatedVerdict;
  /** True when the level differs. */
  changed: boolean;
}

export interface SimulationSummary {
  total: number;
  changed: number;
  /** Counts by (then level, now level), strictest `then` first. */
  transitions: Array<{ then: SupervisionLevel; now: SupervisionLevel; count: number }>;
}

/**
 * Judges each call by a candidate policy document and sets the outcome beside what it got before. Pure: it
 * uses the same ApprovalPolicy as proposals, so a simulation says exactly what the candidate would do.
 */
export function simulatePolicy(
  calls: readonly SimulationCall[],
  inputs: SimulationInputs,
): { results: SimulationResult[]; summary: SimulationSummary } {
  // A broken bound with nothing to record: thrown (a 400), before any matching.
  if (simulationMatches(calls, inputs) > MAX_SIMULATION_MATCHES) {
    const knob = calls.some((c) => c.recorded) ? 'limit' : 'calls';
    throw new ValidationError([
      {
        path: knob,
        message: `judging these calls takes more than ${MAX_SIMULATION_MATCHES} matches of a rule against a command or its parts: judge fewer calls (${knob}) or shorter commands`,
      },
    ]);
  }
  const judge = (document: PolicyDocument, version: number, c: SimulationCall) => {
    const v = ApprovalPolicy.evaluate(c.call, {
      policy: document,
      policyVersion: version,
      tool: inputs.tools.get(c.call.toolName),
      grants: inputs.grants,
      conversation: c.conversation,
      now: inputs.now,
    });
    return { level: v.level, rule: v.rule, reason: v.reason, policyVersion: v.policyVersion };
  };
  const results = calls.map((c): SimulationResult => {
    const then = c.recorded
      ? { ...c.recorded, source: 'recorded' as const }
      : { ...judge(inputs.current.document, inputs.current.version, c), source: 'current' as const };
    const { level, rule, reason } = judge(inputs.candidate, inputs.current.version, c);
    return { then, now: { level, rule, reason }, changed: then.level !== level };
  });
  return { results, summary: summarise(results) };
}

/**
 * An upper bound on the matching a simulation does, counted before any: for each call and each document it is
 * judged by (the candidate; the policy in force too unless the call was recorded), the document's rules on the
 * call's tool, times the whole call and each part of the command arguments its shell rules name. It stops
 * counting past the bound.
 */
export function simulationMatches(calls: readonly SimulationCall[], inputs: SimulationInputs): number {
  let total = 0;
  for (const c of calls) {
    const parts = new Map<string, number>();
    const partsOf = (name: string) => {
      let n = parts.get(name);
      if (n === undefined) {
        const split = splitShellCommand(c.call.arguments[name] as string);
        parts.set(name, (n = split.parsable ? split.parts.length : 0));
      }
      return n;
    };
    if (!c.recorded) total += matchesOf(c.call, inputs.current.document, partsOf);
    total += matchesOf(c.call, inputs.candidate, partsOf);
    if (total > MAX_SIMULATION_MATCHES) break;
  }
  return total;
}

function matchesOf(call: ProposedCallFacts, document: PolicyDocument, partsOf: (name: string) => number): number {
  const candidates = document.rulesForTool(call.toolName);
  if (candidates.length === 0) return 0;
  const shellTool = document.isShellTool(call.toolName);
  const names = new Set<string>();
  for (const i of candidates) {
    if (!(document.rules[i].shell ?? shellTool)) continue;
    for (const name of document.patterns[i].argumentNames)
      if (Object.hasOwn(call.arguments, name) && typeof call.arguments[name] === 'string') names.add(name);
  }
  let parts = 0;
  for (const name of names) parts += partsOf(name);
  return candidates.length * (1 + parts);
}

function summarise(results: readonly SimulationResult[]): SimulationSummary {
  const counts = new Map<string, number>();
  for (const r of results)
    counts.set(`${r.then.level} ${r.now.level}`, (counts.get(`${r.then.level} ${r.now.level}`) ?? 0) + 1);
  const transitions = [...counts].map(([key, count]) => {
    const [then, now] = key.split(' ') as [SupervisionLevel, SupervisionLevel];
    return { then, now, count };
  });
  transitions.sort((a, b) => strictness(a.then) - strictness(b.then) || strictness(a.now) - strictness(b.now));
  return { total: results.length, changed: results.filter((r) => r.changed).length, transitions };
}
