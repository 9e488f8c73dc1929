import type { ProposedCallFacts } from './call-facts';
import type { PolicyDocument, PolicyRule, PolicyRuleWhen } from './policy-document';
import { isRedirectPart, ShellSplit, splitShellCommand } from './shell-command';
import { SupervisionLevel, strictness } from './supervision-level';

/*
 * Which rule of a policy document decides a proposed call: the strictest that matches (the earlier on a tie),
 * with shell commands judged part by part. ApprovalPolicy.evaluate turns the answer into a verdict.
 */

export interface Decision {
  /** The deciding rule's index; null when the flags or defaults decide. */
  index: number | null;
  /** Says which part of a shell command decided, or that it could not be read. */
  explain?: (reason: string) => string;
  /**
   * Whether a standing grant may let a `confirm` through. Not for a shell command that runs more than one
   * command or could not be read: a grant's globs see the command as written, so `ls *` would cover `ls; rm -rf /`.
   */
  grantable: () => boolean;
}

/**
 * The strictest matching rule, the earlier one on a tie; null when none matches. For a shell tool (or a rule
 * with `shell: true`), the command arguments a rule names are split once into simple commands
 * (`shell-command.ts`), and the call is judged as strictly as its strictest part: the whole command and each
 * part get the level of the strictest rule matching them, or the tool's own level when no rule does.
 */
export function decidingRule(
  call: ProposedCallFacts,
  policy: PolicyDocument,
  toolLevel: () => SupervisionLevel,
): Decision {
  let level: SupervisionLevel | undefined;
  const fallback = () => (level ??= toolLevel());
  const commands = new ShellArguments(call.arguments);
  const candidates = policy.rulesForTool(call.toolName);
  const shellTool = policy.isShellTool(call.toolName);
  const names = commandArguments(call, policy, candidates, shellTool);
  const grantable = () =>
    (!shellTool || commands.allSimple(stringArguments(call.arguments))) && commands.allSimple(names);
  if (names.length === 0) return { index: literalDecidingRule(call, policy, candidates), grantable };
  const live = candidates.filter((i) => conditionsHold(policy.rules[i].when, call, i));
  const unreadable = names.find((name) => !commands.split(name).parsable);
  if (unreadable !== undefined)
    return {
      ...unparsableDecision(policy, live, fallback),
      explain: explainUnparsable(unreadable, commands.split(unreadable), call.quoteArguments !== false),
    };
  return { ...shellDecision(call, policy, live, names, commands, shellTool, fallback), grantable };
}

/** The rule index of the strictest matching rule, as before shell matching: patterns see the arguments as written. */
function literalDecidingRule(
  call: ProposedCallFacts,
  policy: PolicyDocument,
  candidates: readonly number[],
): number | null {
  const { rules, patterns } = policy;
  let best: number | null = null;
  let bestStrictness = Infinity;
  for (const i of candidates) {
    const s = strictness(rules[i].level);
    // A rule no stricter than the best so far cannot decide, so skip matching it at all.
    if (s >= bestStrictness || !conditionsHold(rules[i].when, call, i) || !patterns[i].matchesArguments(call.arguments))
      continue;
    best = i;
    bestStrictness = s;
    if (s === 0) break;
  }
  return best;
}

const isShellRule = (rule: Readonly<PolicyRule>, shellTool: boolean) => rule.shell ?? shellTool;

/** The string arguments that some shell rule for this tool names: the ones read as command lines. */
function commandArguments(
  call: ProposedCallFacts,
  policy: PolicyDocument,
  candidates: readonly number[],
  shellTool: boolean,
): string[] {
  const names: string[] = [];
  for (const i of candidates) {
    if (!isShellRule(policy.rules[i], shellTool)) continue;
    for (const name of policy.patterns[i].argumentNames) {
      if (Object.hasOwn(call.arguments, name) && typeof call.arguments[name] === 'string' && !names.includes(name))
        names.push(name);
    }
  }
  return names;
}

function stringArguments(args: Record<string, unknown>): string[] {
  return Object.keys(args).filter((name) => typeof args[name] === 'string');
}

/** Each command argument split at most once per call, however many rules name it. */
class ShellArguments {
  private readonly splits = new Map<string, ShellSplit>();
  constructor(private readonly args: Record<string, unknown>) {}

  split(name: string): ShellSplit {
    let found = this.splits.get(name);
    if (!found) this.splits.set(name, (found = splitShellCommand(this.args[name] as string)));
    return found;
  }

  /** Every named argument reads as (at most) one simple command: an assignment or a redirection is a part too. */
  allSimple(names: readonly string[]): boolean {
    return names.every((name) => {
      const split = this.split(name);
      return split.parsable && split.parts.length <= 1 && !split.parts.some(isRedirectPart);
    });
  }
}

/**
 * A command that could not be read may run anything: it gets the strictest level of every rule that could
 * match this tool (its tool glob and `when`), arguments aside, and the tool's own level too unless a rule on
 * the tool name alone would match any command.
 */
function unparsableDecision(
  policy: PolicyDocument,
  live: readonly number[],
  fallback: () => SupervisionLevel,
): Decision {
  let best: number | null = null;
  let bestStrictness = Infinity;
  for (const i of live) {
    const s = strictness(policy.rules[i].level);
    if (s < bestStrictness) [best, bestStrictness] = [i, s];
  }
  const anyCommand = live.some((i) => policy.patterns[i].argumentNames.length === 0);
  if (!anyCommand && strictness(fallback()) < bestStrictness) best = null;
  return { index: best, grantable: () => false };
}

function explainUnparsable(name: string, split: ShellSplit, quote: boolean): (reason: string) => string {
  // Why it could not be parsed may quote the command: left out when the arguments hold secrets.
  const why = split.parsable || !quote ? '' : `: ${split.reason}`;
  return (reason) =>
    `The command could not be parsed safely${why} (argument ${name}), so the strictest level that could apply holds. ${reason}`;
}

/**
 * Judges the whole call and, for each command argument, each of its parts in the argument's place. A shell
 * rule matches the whole when each argument it names matches as written or in one of its parts; a part when
 * the part matches (its other arguments as for the whole). Other rules match as written, whatever the part.
 * The strictest outcome wins; ties go to the earlier rule, then to a rule over the tool's own level, then to
 * the first part.
 */
function shellDecision(
  call: ProposedCallFacts,
  policy: PolicyDocument,
  live: readonly number[],
  names: readonly string[],
  commands: ShellArguments,
  shellTool: boolean,
  fallback: () => SupervisionLevel,
): Omit<Decision, 'grantable'> {
  const partsOf = new Map(names.map((name) => [name, (commands.split(name) as { parts: readonly string[] }).parts]));
  const { rules } = policy;
  // Strictest first, the earlier on a tie: a part's outcome is the first rule that matches it.
  const order = [...live].sort((a, b) => strictness(rules[a].level) - strictness(rules[b].level) || a - b);
  const matchers = new Map<number, PartMatcher>();
  const matcher = (i: number) => {
    let m = matchers.get(i);
    if (!m) matchers.set(i, (m = ruleMatcher(call, policy, i, partsOf, shellTool)));
    return m;
  };
  // The parts first, so a tie names the part that decided; the whole command last.
  const candidates: Array<Part | null> = [];
  for (const [name, parts] of partsOf) for (const text of parts) candidates.push({ name, text });
  candidates.push(null);

  let best: { strictness: number; index: number | null; part: Part | null } | undefined;
  for (const part of candidates) {
    let index: number | null = null;
    let s = Infinity;
    for (const i of order) {
      const level = strictness(rules[i].level);
      // Past the best so far, only "no rule matches" (the tool's own level) could still win.
      if (best && level > best.strictness && strictness(fallback()) >= best.strictness) break;
      if (matcher(i)(part)) {
        [index, s] = [i, level];
        break;
      }
    }
    if (index === null) s = strictness(fallback());
    const rank = index ?? Infinity;
    if (!best || s < best.strictness || (s === best.strictness && rank < (best.index ?? Infinity)))
      best = { strictness: s, index, part };
    // Nothing beats the first deny rule.
    if (best.index !== null && best.index === order[0] && best.strictness === 0) break;
  }
  const { index, part } = best!;
  // A part that is the whole command as written needs no mention; nor does a rule that gives its own reason.
  if (
    part === null ||
    part.text === call.arguments[part.name] ||
    (index !== null && policy.rules[index].reason !== undefined)
  )
    return { index };
  const where = call.quoteArguments === false ? `a command in ${part.name}` : `"${shorten(part.text)}" in ${part.name}`;
  return {
    index,
    explain: index === null ? (reason) => `${where} matches no rule: ${reason}` : (reason) => `${reason}, for ${where}`,
  };
}

/** One simple command in place of the command argument `name`; null stands for the whole call. */
type Part = { name: string; text: string };
type PartMatcher = (part: Part | null) => boolean;

/** Whether rule `i` matches the whole call (`null`) or the call with one command argument replaced by a part. */
function ruleMatcher(
  call: ProposedCallFacts,
  policy: PolicyDocument,
  i: number,
  partsOf: ReadonlyMap<string, readonly string[]>,
  shellTool: boolean,
): PartMatcher {
  const pattern = policy.patterns[i];
  const names = pattern.argumentNames;
  const shell = isShellRule(policy.rules[i], shellTool);
  if (!shell || !names.some((name) => partsOf.has(name))) {
    const matches = pattern.matchesArguments(call.arguments);
    return () => matches;
  }
  // A command argument, for the whole call (or another argument's part): as written or in one of its parts.
  const anywhere = (name: string) =>
    pattern.matchesArgumentText(name, call.arguments[name] as string) ||
    partsOf.get(name)!.some((p) => pattern.matchesArgumentText(name, p));
  if (names.length === 1) {
    // The common case, `shell(cmd=…)`, without allocating per rule.
    const [name] = names;
    let whole: boolean | undefined;
    return (part) =>
      part !== null && part.name === name ? pattern.matchesArgumentText(name, part.text) : (whole ??= anywhere(name));
  }
  // The other arguments it names match as written (a missing one never does; a non-string as its JSON text).
  const othersMatch = names.every((name) => {
    if (partsOf.has(name)) return true;
    if (!Object.hasOwn(call.arguments, name)) return false;
    const v = call.arguments[name];
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    return text !== undefined && pattern.matchesArgumentText(name, text);
  });
  if (!othersMatch) return () => false;
  const wholes = new Map<string, boolean>();
  const whole = (name: string) => wholes.get(name) ?? (wholes.set(name, anywhere(name)), wholes.get(name)!);
  return (part) =>
    names.every(
      (name) =>
        !partsOf.has(name) ||
        (part !== null && part.name === name ? pattern.matchesArgumentText(name, part.text) : whole(name)),
    );
}

const shorten = (text: string) => (text.length > 120 ? `${text.slice(0, 119)}…` : text);

function conditionsHold(when: PolicyRuleWhen | undefined, call: ProposedCallFacts, rule: number): boolean {
  if (!when) return true;
  if (
    when.confidenceBelow !== undefined &&
    !(typeof call.confidence === 'number' && call.confidence < when.confidenceBelow)
  )
    return false;
  if (
    when.estimatedCostAbove !== undefined &&
    !(typeof call.estimatedCost === 'number' && call.estimatedCost > when.estimatedCostAbove)
  )
    return false;
  if (when.rateAbove || when.costAbove) {
    const crossed = triggersCrossed(when, call, rule);
    if (crossed.rate === false || crossed.cost === false) return false;
  }
  return true;
}

/**
 * Whether each trigger of a rule's `when` is crossed by this call: more than `count` calls with this one, or a
 * total above `total` with this call's cost. Undefined for a trigger the rule lacks. A count not given is crossed.
 */
export function triggersCrossed(
  when: PolicyRuleWhen,
  call: ProposedCallFacts,
  rule: number,
): { rate?: boolean; cost?: boolean; calls?: number; total?: number } {
  const usage = call.usage?.get(rule);
  const out: { rate?: boolean; cost?: boolean; calls?: number; total?: number } = {};
  if (when.rateAbove) {
    const before = usage?.calls;
    out.calls = before === undefined ? undefined : before + 1;
    out.rate = out.calls === undefined || out.calls > when.rateAbove.count;
  }
  if (when.costAbove) {
    const before = usage?.cost;
    out.total = before === undefined ? undefined : before + (call.estimatedCost ?? 0);
    out.cost = out.total === undefined || out.total > when.costAbove.total;
  }
  return out;
}

/** The counts behind a rule's triggers, for its verdict's reason: `21 calls in 1h by agent (above 20)`. */
export function triggerNote(rule: Readonly<PolicyRule>, index: number, call: ProposedCallFacts): string | undefined {
  const when = rule.when;
  if (!when?.rateAbove && !when?.costAbove) return undefined;
  const crossed = triggersCrossed(when, call, index);
  const parts: string[] = [];
  if (when.rateAbove) {
    const { count, per, by } = when.rateAbove;
    parts.push(
      crossed.calls === undefined
        ? `rateAbove: calls in ${span(per)} by ${by} not counted, held as crossed`
        : `rateAbove: ${crossed.calls} calls in ${span(per)} by ${by}, above ${count}`,
    );
  }
  if (when.costAbove) {
    const { total, per, by } = when.costAbove;
    parts.push(
      crossed.total === undefined
        ? `costAbove: cost in ${span(per)} by ${by} not summed, held as crossed`
        : `costAbove: ${round(crossed.total)} in ${span(per)} by ${by}, above ${total}`,
    );
  }
  return parts.join('; ');
}

const round = (n: number) => Math.round(n * 100) / 100;

/** A window as written most simply: `1h`, `1d`, `90s`. */
function span(seconds: number): string {
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const)
    if (seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}
