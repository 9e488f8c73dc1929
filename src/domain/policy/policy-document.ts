import { ValidationError, ValidationFault } from '../shared/domain-error';
import { jsonEqual } from '../shared/json';
import { GRANT_LIMITS, GrantLimit } from './grant-limit';
import { SUPERVISION_LEVELS, SupervisionLevel, isSupervisionLevel } from './supervision-level';
import { ToolPattern } from './tool-pattern';

export interface PolicyDefaults {
  /** Level for a tool neither registered, annotated nor matched by a rule. */
  unknownTools: SupervisionLevel;
  timeoutSeconds: number;
  /** Roles that may decide; `requester` is the conversation's user. */
  approvers: string[];
  /** When false, agent-registered flags and annotations never make a call laxer than `unknownTools`. */
  trustAgentFlags: boolean;
  /** The widest scope of a standing grant an `always_allow` may make; a rule's own `grants` wins. */
  grants: GrantLimit;
  /**
   * False: the conversation's user and the agent's owner may not decide its calls (separation of duties);
   * a rule's own `selfApproval` wins.
   */
  selfApproval: boolean;
  /**
   * Globs on the names of tools whose string arguments are shell command lines: a rule naming such an argument
   * is matched against the whole command and each simple command in it (see `shell-command.ts`). Left out:
   * DEFAULT_SHELL_TOOLS (and left out of the normalised document, so documents without it stay as they were).
   */
  shellTools?: string[];
}

/**
 * The tool names agent frameworks and MCP servers commonly give a shell: exact names, no wildcards, because a
 * tool wrongly taken for a shell gets its string arguments split (and unparsable ones held at the strictest level).
 */
export const DEFAULT_SHELL_TOOLS: readonly string[] = Object.freeze([
  'shell',
  'sh',
  'bash',
  'Bash',
  'zsh',
  'terminal',
  'run_command',
  'run_shell_command',
  'run_terminal_cmd',
  'execute_command',
  'exec_command',
]);
/** The most globs `defaults.shellTools` may list. */
export const MAX_SHELL_TOOLS = 100;

/** How many distinct people must approve a held call, and (optionally) which roles count towards it. */
export interface PolicyQuorum {
  count: number;
  /** Only approvals by people holding one of these roles count (and only they may approve). */
  of?: string[];
}

/** All given conditions must hold; each never matches a call without its field. */
export interface PolicyRuleWhen {
  confidenceBelow?: number;
  estimatedCostAbove?: number;
}

export interface PolicyRule {
  match: string;
  level: SupervisionLevel;
  when?: PolicyRuleWhen;
  requireRole?: string;
  approvers?: string[];
  timeoutSeconds?: number;
  /** The widest scope of a standing grant an `always_allow` on the calls this rule decides may make. */
  grants?: GrantLimit;
  /** False: the conversation's user and the agent's owner may not decide the calls this rule holds. */
  selfApproval?: boolean;
  /** Distinct approvals a held call needs (absent: one); the first rejection still rejects. */
  quorum?: PolicyQuorum;
  /** While a held call waits: after each step's seconds, more people may decide it and channels are told. */
  escalate?: EscalationStep[];
  /** Seconds before a held call expires at which the channels remind people of it (each once). */
  remindBefore?: number[];
  /**
   * True: the string arguments this rule names are shell command lines, whatever `defaults.shellTools` says;
   * false: matched as written even on a shell tool. Absent: shell when the tool is one of `defaults.shellTools`.
   */
  shell?: boolean;
  reason?: string;
}

export interface PolicyDocumentJson {
  defaults: PolicyDefaults;
  rules: PolicyRule[];
}

export const MAX_RULES = 1000;
/** Tool names whose candidate rules are remembered; the memo starts afresh when full. */
const TOOL_MEMO_SIZE = 1024;
export const MAX_TIMEOUT_SECONDS = 86_400;
/** A quorum larger than this is a typo, not a control: no call should wait on more people. */
export const MAX_QUORUM = 10;
/** Escalation steps and reminders a rule may list: a handful is a process, more is noise. */
export const MAX_ESCALATION_STEPS = 5;
export const NOTIFY_CHANNELS = ['slack', 'webhook', 'inbox'] as const;

/** One step of an escalation: `after` seconds of waiting, these roles may decide too, and these channels are told. */
export interface EscalationStep {
  after: number;
  approvers?: string[];
  notify?: Array<(typeof NOTIFY_CHANNELS)[number]>;
}

const BUILT_IN_DEFAULTS: PolicyDefaults = {
  unknownTools: 'confirm',
  timeoutSeconds: 300,
  approvers: ['approver', 'admin'],
  trustAgentFlags: true,
  grants: 'tenant',
  selfApproval: true,
};

/**
 * Who may be listed in `approvers`: the roles that may decide (CONTRACT §2), and `requester`, the conversation's
 * user. Auditors change nothing and agents never decide, so a policy naming either (or a typo, which would make
 * calls no one can decide) is refused.
 */
export const APPROVER_NAMES = ['approver', 'admin', 'requester'] as const;

/**
 * A tenant's policy document (CONTRACT §5), validated and normalised once: `defaults` has every
 * field, rules omit what was left out, and each rule's `match` is compiled (`patterns[i]`).
 */
interface TrieNode {
  next: Map<string, TrieNode>;
  /** Rules whose literal head ends at this node. */
  rules: number[];
}

/**
 * Rules by the literal text their tool glob starts with: exact names in a map, heads in a character
 * trie. A name's candidates are the rules along its path, so a lookup costs the name's length, not the
 * number of rules; only rules that start with a wildcard are tried on every name.
 */
class ToolNameIndex {
  private readonly exact = new Map<string, number[]>();
  private readonly root: TrieNode = { next: new Map(), rules: [] };

  constructor(patterns: readonly ToolPattern[]) {
    patterns.forEach((p, i) => {
      if (p.toolIsExact) {
        const list = this.exact.get(p.toolHead) ?? [];
        list.push(i);
        this.exact.set(p.toolHead, list);
        return;
      }
      let node = this.root;
      for (const ch of p.toolHead) {
        let child = node.next.get(ch);
        if (!child) node.next.set(ch, (child = { next: new Map(), rules: [] }));
        node = child;
      }
      node.rules.push(i);
    });
  }

  /** Rule indices, ascending, that may accept `name` (each still has to be tested). */
  candidates(name: string): number[] {
    const out = [...this.root.rules, ...(this.exact.get(name) ?? [])];
    let node: TrieNode | undefined = this.root;
    for (const ch of name) {
      node = node.next.get(ch);
      if (!node) break;
      for (const i of node.rules) out.push(i);
    }
    return out.sort((a, b) => a - b);
  }
}

export class PolicyDocument {
  private readonly candidates = new Map<string, readonly number[]>();
  private readonly index: ToolNameIndex;
  private readonly shellGlobs: readonly ToolPattern[];
  private readonly shellMemo = new Map<string, boolean>();

  private constructor(
    private readonly doc: PolicyDocumentJson,
    /** The compiled `match` of each rule, by rule index. */
    readonly patterns: readonly ToolPattern[],
  ) {
    this.index = new ToolNameIndex(patterns);
    this.shellGlobs = (doc.defaults.shellTools ?? DEFAULT_SHELL_TOOLS).map((glob) => ToolPattern.parse(glob));
  }

  /** A new document (PUT, the policy file). Throws ValidationError naming the path of every fault, e.g. `rules[2].level`. */
  static parse(raw: unknown): PolicyDocument {
    return PolicyDocument.read(raw, true);
  }

  /**
   * A document stored by an earlier version: checks added since (approver names, pattern bounds) are not
   * applied again, so a tenant's current policy always loads. Deciding stays safe without them: auditors and
   * agents never decide, whatever a stored policy lists, and matching is linear however long a pattern is.
   */
  static restore(raw: unknown): PolicyDocument {
    return PolicyDocument.read(raw, false);
  }

  private static read(raw: unknown, strict: boolean): PolicyDocument {
    const faults: ValidationFault[] = [];
    const ctx: ReadContext = { faults, strict };
    const top = readObject(raw, '', ['defaults', 'rules'], faults);
    if (!top) throw new ValidationError(faults);
    const defaults = readDefaults(top.defaults, ctx);
    const rules = readRules(top.rules, ctx);
    if (faults.length > 0) throw new ValidationError(faults);
    return PolicyDocument.of(
      { defaults, rules: rules.map((r) => r.rule) },
      rules.map((r) => r.pattern),
    );
  }

  /** The built-in defaults and no rules: a tenant's policy before its first PUT. */
  static empty(): PolicyDocument {
    return PolicyDocument.of(
      { defaults: { ...BUILT_IN_DEFAULTS, approvers: [...BUILT_IN_DEFAULTS.approvers] }, rules: [] },
      [],
    );
  }

  private static of(doc: PolicyDocumentJson, patterns: ToolPattern[]): PolicyDocument {
    return new PolicyDocument(deepFreeze(doc), Object.freeze(patterns));
  }

  get defaults(): Readonly<PolicyDefaults> {
    return this.doc.defaults;
  }

  get rules(): readonly Readonly<PolicyRule>[] {
    return this.doc.rules;
  }

  /**
   * Indices (ascending) of the rules whose pattern accepts `toolName`, arguments and `when` aside.
   * The index narrows a thousand rules to those whose literal head the name starts with (plus those
   * that start with a wildcard); the answer is memoised per tool name, as a tenant proposes few names.
   */
  rulesForTool(toolName: string): readonly number[] {
    let found = this.candidates.get(toolName);
    if (!found) {
      found = Object.freeze(this.index.candidates(toolName).filter((i) => this.patterns[i].matchesTool(toolName)));
      if (this.candidates.size >= TOOL_MEMO_SIZE) this.candidates.clear();
      this.candidates.set(toolName, found);
    }
    return found;
  }

  /** Whether `defaults.shellTools` (else DEFAULT_SHELL_TOOLS) names this tool; memoised like `rulesForTool`. */
  isShellTool(toolName: string): boolean {
    let found = this.shellMemo.get(toolName);
    if (found === undefined) {
      found = this.shellGlobs.some((g) => g.matchesTool(toolName));
      if (this.shellMemo.size >= TOOL_MEMO_SIZE) this.shellMemo.clear();
      this.shellMemo.set(toolName, found);
    }
    return found;
  }

  equals(other: PolicyDocument): boolean {
    return jsonEqual(this.doc, other.doc);
  }

  /** A fresh, mutable copy of the normalised document. */
  toJSON(): PolicyDocumentJson {
    return JSON.parse(JSON.stringify(this.doc)) as PolicyDocumentJson;
  }
}

type Faults = ValidationFault[];
/** Where faults go, and whether the checks for new documents apply (see `PolicyDocument.restore`). */
interface ReadContext {
  faults: Faults;
  strict: boolean;
}
/** Reads one value; on a fault records it and answers undefined. */
type Reader<T> = (value: unknown, path: string, faults: Faults, strict: boolean) => T | undefined;

function readDefaults(raw: unknown, { faults, strict }: ReadContext): PolicyDefaults {
  const o =
    raw === undefined
      ? {}
      : readObject(
          raw,
          'defaults',
          ['unknownTools', 'timeoutSeconds', 'approvers', 'trustAgentFlags', 'grants', 'selfApproval', 'shellTools'],
          faults,
        );
  const field = <T>(name: keyof PolicyDefaults, read: Reader<T>) =>
    o?.[name] === undefined ? undefined : read(o[name], `defaults.${name}`, faults, strict);
  return {
    unknownTools: field('unknownTools', readLevel) ?? BUILT_IN_DEFAULTS.unknownTools,
    timeoutSeconds: field('timeoutSeconds', readTimeout) ?? BUILT_IN_DEFAULTS.timeoutSeconds,
    approvers: field('approvers', readApprovers) ?? [...BUILT_IN_DEFAULTS.approvers],
    trustAgentFlags: field('trustAgentFlags', readBoolean) ?? BUILT_IN_DEFAULTS.trustAgentFlags,
    grants: field('grants', readGrantLimit) ?? BUILT_IN_DEFAULTS.grants,
    selfApproval: field('selfApproval', readBoolean) ?? BUILT_IN_DEFAULTS.selfApproval,
    ...(o?.shellTools !== undefined && { shellTools: field('shellTools', readShellTools) }),
  };
}

function readRules(raw: unknown, ctx: ReadContext): { rule: PolicyRule; pattern: ToolPattern }[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) return fault(ctx.faults, 'rules', 'must be an array') ?? [];
  if (raw.length > MAX_RULES) return fault(ctx.faults, 'rules', `must hold at most ${MAX_RULES} rules`) ?? [];
  return raw.flatMap((item, i) => {
    const read = readRule(item, `rules[${i}]`, ctx);
    return read ? [read] : [];
  });
}

function readRule(
  raw: unknown,
  path: string,
  { faults, strict }: ReadContext,
): { rule: PolicyRule; pattern: ToolPattern } | undefined {
  const o = readObject(
    raw,
    path,
    [
      'match',
      'level',
      'when',
      'requireRole',
      'approvers',
      'timeoutSeconds',
      'grants',
      'selfApproval',
      'quorum',
      'escalate',
      'remindBefore',
      'shell',
      'reason',
    ],
    faults,
  );
  if (!o) return undefined;
  const required = <T>(name: string, read: Reader<T>) =>
    o[name] === undefined
      ? fault(faults, `${path}.${name}`, 'is required')
      : read(o[name], `${path}.${name}`, faults, strict);
  const optional = <T>(name: string, read: Reader<T>) =>
    o[name] === undefined ? undefined : read(o[name], `${path}.${name}`, faults, strict);

  const pattern = required('match', readPattern);
  const level = required('level', readLevel);
  const when = optional('when', readWhen);
  const requireRole = optional('requireRole', readNonEmptyString);
  const approvers = optional('approvers', readApprovers);
  const timeoutSeconds = optional('timeoutSeconds', readTimeout);
  const grants = optional('grants', readGrantLimit);
  const selfApproval = optional('selfApproval', readBoolean);
  const quorum = optional('quorum', readQuorum);
  const escalate = optional('escalate', readEscalation);
  const remindBefore = optional('remindBefore', readReminders);
  const shell = optional('shell', readBoolean);
  const reason = optional('reason', readNonEmptyString);
  if (!pattern || !level) return undefined;
  if (strict && shell === true && pattern.argumentNames.length === 0) {
    return fault(
      faults,
      `${path}.shell`,
      `applies to a match that names the command argument, as in ${pattern.toString()}(cmd=rm *)`,
    );
  }
  if (strict && quorum && quorum.count > 1 && level !== 'confirm' && level !== 'manual') {
    return fault(faults, `${path}.quorum`, `applies to calls a person decides (confirm, manual), not to ${level}`);
  }
  for (const [name, given] of [
    ['escalate', escalate],
    ['remindBefore', remindBefore],
  ] as const) {
    if (strict && given && level !== 'confirm' && level !== 'manual')
      return fault(faults, `${path}.${name}`, `applies to calls a person decides (confirm, manual), not to ${level}`);
  }
  // A step at or after the deadline would never happen: the call has expired by then.
  const deadline = timeoutSeconds ?? undefined;
  if (strict && deadline !== undefined) {
    const late = (escalate ?? []).findIndex((s) => s.after >= deadline);
    if (late >= 0)
      return fault(
        faults,
        `${path}.escalate[${late}].after`,
        `must be less than the rule's timeoutSeconds (${deadline})`,
      );
    const early = (remindBefore ?? []).findIndex((b) => b >= deadline);
    if (early >= 0)
      return fault(
        faults,
        `${path}.remindBefore[${early}]`,
        `must be less than the rule's timeoutSeconds (${deadline})`,
      );
  }
  // Build in a fixed key order and leave out what was left out, so equal documents serialise alike.
  const rule: PolicyRule = { match: pattern.toString(), level };
  if (when) rule.when = when;
  if (requireRole !== undefined) rule.requireRole = requireRole;
  if (approvers) rule.approvers = approvers;
  if (timeoutSeconds !== undefined) rule.timeoutSeconds = timeoutSeconds;
  if (grants !== undefined) rule.grants = grants;
  if (selfApproval !== undefined) rule.selfApproval = selfApproval;
  // `quorum: 1` is the default written out: left out, so it serialises as the document without it.
  if (quorum !== undefined && (quorum.count > 1 || quorum.of)) rule.quorum = quorum;
  if (escalate !== undefined) rule.escalate = escalate;
  if (remindBefore !== undefined) rule.remindBefore = remindBefore;
  if (shell !== undefined) rule.shell = shell;
  if (reason !== undefined) rule.reason = reason;
  return { rule, pattern };
}

/**
 * A new pattern is bounded (length, wildcards) before it is compiled, then tried on its own example once,
 * so a pattern that could not be matched is refused here rather than failing proposals later.
 */
const readPattern: Reader<ToolPattern> = (v, path, faults, strict) => {
  if (typeof v !== 'string') return fault(faults, path, 'must be a string');
  const tooBig = strict ? ToolPattern.boundsFault(v) : undefined;
  if (tooBig) return fault(faults, path, tooBig);
  try {
    const pattern = ToolPattern.parse(v);
    if (strict) pattern.selfCheck();
    return pattern;
  } catch (e) {
    return fault(faults, path, e instanceof Error ? e.message : String(e));
  }
};

/** Globs on tool names (no argument lists); an empty list turns shell matching off but for rules with `shell: true`. */
const readShellTools: Reader<string[]> = (v, path, faults, strict) => {
  if (!Array.isArray(v)) return fault(faults, path, 'must be an array of tool-name globs');
  if (v.length > MAX_SHELL_TOOLS) return fault(faults, path, `may list at most ${MAX_SHELL_TOOLS} globs`);
  const globs = v.map((g, i) => readToolGlob(g, `${path}[${i}]`, faults, strict));
  return globs.every((g) => g !== undefined) ? [...new Set(globs as string[])] : undefined;
};

const readToolGlob: Reader<string> = (v, path, faults, strict) => {
  const glob = readNonEmptyString(v, path, faults, strict);
  if (glob === undefined) return undefined;
  if (/[()]/.test(glob)) return fault(faults, path, 'must be a glob on a tool name, without an argument list');
  const tooBig = strict ? ToolPattern.boundsFault(glob) : undefined;
  if (tooBig) return fault(faults, path, tooBig);
  try {
    ToolPattern.parse(glob);
    return glob;
  } catch (e) {
    return fault(faults, path, e instanceof Error ? e.message : String(e));
  }
};

const readGrantLimit: Reader<GrantLimit> = (v, path, faults) =>
  (GRANT_LIMITS as readonly unknown[]).includes(v)
    ? (v as GrantLimit)
    : fault(faults, path, `must be one of ${GRANT_LIMITS.join(', ')}`);

const readApprovers: Reader<string[]> = (v, path, faults, strict) => {
  const roles = readRoles(v, path, faults, strict);
  if (!roles || !strict) return roles;
  let ok = true;
  roles.forEach((role, i) => {
    if ((APPROVER_NAMES as readonly string[]).includes(role)) return;
    ok = false;
    const why =
      role === 'auditor'
        ? 'auditors change nothing: they cannot decide tool calls'
        : role === 'agent'
          ? 'agents cannot decide tool calls: approval comes from people'
          : `is not a role that may decide; use ${APPROVER_NAMES.join(', ')}`;
    fault(faults, `${path}[${i}]`, `"${role}": ${why}`);
  });
  return ok ? roles : undefined;
};

const readWhen: Reader<PolicyRuleWhen> = (v, path, faults) => {
  const o = readObject(v, path, ['confidenceBelow', 'estimatedCostAbove'], faults);
  if (!o) return undefined;
  const when: PolicyRuleWhen = {};
  if (o.confidenceBelow !== undefined) {
    const x = readNumber(o.confidenceBelow, `${path}.confidenceBelow`, faults, 0, 1, 'must be a number from 0 to 1');
    if (x !== undefined) when.confidenceBelow = x;
  }
  if (o.estimatedCostAbove !== undefined) {
    const y = readNumber(
      o.estimatedCostAbove,
      `${path}.estimatedCostAbove`,
      faults,
      0,
      Number.MAX_VALUE,
      'must be a number of at least 0',
    );
    if (y !== undefined) when.estimatedCostAbove = y;
  }
  return when;
};

/** Seconds: an integer, or a string with a unit (`90s`, `2m`, `1h`), as people write them in YAML. */
function readSeconds(v: unknown, path: string, faults: Faults): number | undefined {
  const units: Record<string, number> = { s: 1, m: 60, h: 3600 };
  const m = typeof v === 'string' ? /^(\d{1,5})\s*([smh])$/.exec(v.trim()) : null;
  const n = typeof v === 'number' ? v : m ? Number(m[1]) * units[m[2]] : NaN;
  return Number.isInteger(n) && n >= 1 && n <= MAX_TIMEOUT_SECONDS
    ? n
    : fault(
        faults,
        path,
        `must be whole seconds from 1 to ${MAX_TIMEOUT_SECONDS} (a number, or a string such as "90s", "2m", "1h")`,
      );
}

/** `escalate: [{after: 120, approvers: [admin], notify: [slack]}, …]`: later steps come later; normalised to seconds. */
const readEscalation: Reader<EscalationStep[]> = (v, path, faults, strict) => {
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_ESCALATION_STEPS)
    return fault(faults, path, `must be a list of 1 to ${MAX_ESCALATION_STEPS} steps`);
  const steps: EscalationStep[] = [];
  v.forEach((raw, i) => {
    const at = `${path}[${i}]`;
    const o = readObject(raw, at, ['after', 'approvers', 'notify'], faults);
    if (!o) return;
    const after =
      o.after === undefined ? fault(faults, `${at}.after`, 'is required') : readSeconds(o.after, `${at}.after`, faults);
    const approvers =
      o.approvers === undefined ? undefined : readApprovers(o.approvers, `${at}.approvers`, faults, strict);
    let notify: EscalationStep['notify'];
    if (o.notify !== undefined) {
      const ok =
        Array.isArray(o.notify) &&
        o.notify.length > 0 &&
        o.notify.every((c) => (NOTIFY_CHANNELS as readonly unknown[]).includes(c));
      if (!ok) fault(faults, `${at}.notify`, `must be a non-empty list of ${NOTIFY_CHANNELS.join(', ')}`);
      else notify = [...new Set(o.notify as NonNullable<EscalationStep['notify']>)];
    }
    if (after === undefined) return;
    if (steps.length > 0 && after <= steps[steps.length - 1].after)
      fault(faults, `${at}.after`, 'must be later than the step before');
    if (!approvers && !notify)
      fault(faults, at, 'names no approvers and no channel to notify: the step would do nothing');
    steps.push({ after, ...(approvers ? { approvers } : {}), ...(notify ? { notify } : {}) });
  });
  return steps.length === v.length ? steps : undefined;
};

/** `remindBefore: [300, 60]` (or "5m"): distinct, normalised to seconds, latest reminder last. */
const readReminders: Reader<number[]> = (v, path, faults) => {
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_ESCALATION_STEPS)
    return fault(faults, path, `must be a list of 1 to ${MAX_ESCALATION_STEPS} durations`);
  const out = v.map((x, i) => readSeconds(x, `${path}[${i}]`, faults));
  if (out.some((x) => x === undefined)) return undefined;
  const sorted = [...new Set(out as number[])].sort((a, b) => b - a);
  return sorted.length === out.length ? sorted : fault(faults, path, 'must not repeat a duration');
};

/** `quorum: 2`, or `quorum: {count: 2, of: [finance]}`; normalised to the object form. */
const readQuorum: Reader<PolicyQuorum> = (v, path, faults, strict) => {
  const countOf = (x: unknown, at: string) =>
    Number.isInteger(x) && (x as number) >= 1 && (x as number) <= MAX_QUORUM
      ? (x as number)
      : fault(faults, at, `must be an integer from 1 to ${MAX_QUORUM}`);
  if (typeof v === 'number') {
    const count = countOf(v, path);
    return count === undefined ? undefined : { count };
  }
  const o = readObject(v, path, ['count', 'of'], faults);
  if (!o) return undefined;
  const count =
    o.count === undefined ? fault(faults, `${path}.count`, 'is required') : countOf(o.count, `${path}.count`);
  const of = o.of === undefined ? undefined : readRoles(o.of, `${path}.of`, faults, strict);
  if (count === undefined || (o.of !== undefined && of === undefined)) return undefined;
  if (of && strict && of.some((r) => r === 'agent' || r === 'auditor'))
    return fault(faults, `${path}.of`, 'agents and auditors never decide: they cannot count towards a quorum');
  return of ? { count, of: [...new Set(of)] } : { count };
};

const readLevel: Reader<SupervisionLevel> = (v, path, faults) =>
  isSupervisionLevel(v) ? v : fault(faults, path, `must be one of ${SUPERVISION_LEVELS.join(', ')}`);

const readTimeout: Reader<number> = (v, path, faults) =>
  Number.isInteger(v) && (v as number) >= 1 && (v as number) <= MAX_TIMEOUT_SECONDS
    ? (v as number)
    : fault(faults, path, `must be an integer from 1 to ${MAX_TIMEOUT_SECONDS}`);

const readBoolean: Reader<boolean> = (v, path, faults) =>
  typeof v === 'boolean' ? v : fault(faults, path, 'must be true or false');

const readNonEmptyString: Reader<string> = (v, path, faults) =>
  typeof v === 'string' && v !== '' ? v : fault(faults, path, 'must be a non-empty string');

const readRoles: Reader<string[]> = (v, path, faults, strict) => {
  if (!Array.isArray(v) || v.length === 0) return fault(faults, path, 'must be a non-empty array of role names');
  const roles = v.map((role, i) => readNonEmptyString(role, `${path}[${i}]`, faults, strict));
  return roles.every((r) => r !== undefined) ? (roles as string[]) : undefined;
};

function readNumber(
  v: unknown,
  path: string,
  faults: Faults,
  min: number,
  max: number,
  message: string,
): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max ? v : fault(faults, path, message);
}

/** A plain object whose keys are all `allowed`; every other key is a fault at its own path. */
function readObject(
  v: unknown,
  path: string,
  allowed: readonly string[],
  faults: Faults,
): Record<string, unknown> | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    return fault(faults, path, path ? 'must be an object' : 'the policy document must be an object');
  const o = v as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!allowed.includes(key) && o[key] !== undefined)
      faults.push({ path: path ? `${path}.${key}` : key, message: 'unknown field' });
  }
  return o;
}

function fault(faults: Faults, path: string, message: string): undefined {
  faults.push({ path, message });
  return undefined;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}
