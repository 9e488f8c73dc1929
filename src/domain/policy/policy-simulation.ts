import { ApprovalPolicy, GrantFacts, PolicyContext, ProposedCallFacts, ToolFlags } from './approval-policy';
import type { PolicyDocument } from './policy-document';
import { SupervisionLevel, strictness } from './supervision-level';

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
export function simulatePolicy(calls: readonly SimulationCall[], inputs: SimulationInputs): { results: SimulationResult[]; summary: SimulationSummary } {
  const judge = (document: PolicyDocument, version: number, c: SimulationCall) => {
    const v = ApprovalPolicy.evaluate(c.call, { policy: document, policyVersion: version, tool: inputs.tools.get(c.call.toolName), grants: inputs.grants, conversation: c.conversation });
    return { level: v.level, rule: v.rule, reason: v.reason, policyVersion: v.policyVersion };
  };
  const results = calls.map((c): SimulationResult => {
    const then = c.recorded ? { ...c.recorded, source: 'recorded' as const } : { ...judge(inputs.current.document, inputs.current.version, c), source: 'current' as const };
    const { level, rule, reason } = judge(inputs.candidate, inputs.current.version, c);
    return { then, now: { level, rule, reason }, changed: then.level !== level };
  });
  return { results, summary: summarise(results) };
}

function summarise(results: readonly SimulationResult[]): SimulationSummary {
  const counts = new Map<string, number>();
  for (const r of results) counts.set(`${r.then.level} ${r.now.level}`, (counts.get(`${r.then.level} ${r.now.level}`) ?? 0) + 1);
  const transitions = [...counts].map(([key, count]) => {
    const [then, now] = key.split(' ') as [SupervisionLevel, SupervisionLevel];
    return { then, now, count };
  });
  transitions.sort((a, b) => strictness(a.then) - strictness(b.then) || strictness(a.now) - strictness(b.now));
  return { total: results.length, changed: results.filter((r) => r.changed).length, transitions };
}
