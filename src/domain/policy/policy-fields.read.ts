/* Readers of a policy document's fields: each checks one value, records its fault by path, and answers undefined then. */
import { ValidationFault } from '../shared/domain-error';
import { isPersonAssignee, PERSON_PREFIX, readPersonReference } from './assignee';
import { GRANT_LIMITS, GrantLimit } from './grant-limit';
import { SUPERVISION_LEVELS, SupervisionLevel, isSupervisionLevel } from './supervision-level';
import { ToolPattern } from './tool-pattern';
import {
  APPROVER_NAMES,
  EscalationStep,
  MAX_ESCALATION_STEPS,
  MAX_QUORUM,
  MAX_SHELL_TOOLS,
  MAX_TIMEOUT_SECONDS,
  NOTIFY_CHANNELS,
  PolicyQuorum,
  STEP_UP_METHODS,
  StepUpMethod,
} from './policy-shape';

export type Faults = ValidationFault[];
/** Where faults go, and whether the checks for new documents apply (see `PolicyDocument.restore`). */
export interface ReadContext {
  faults: Faults;
  strict: boolean;
}
/** Reads one value; on a fault records it and answers undefined. */
export type Reader<T> = (value: unknown, path: string, faults: Faults, strict: boolean) => T | undefined;

/**
 * A new pattern is bounded (length, wildcards) before it is compiled, then tried on its own example once,
 * so a pattern that could not be matched is refused here rather than failing proposals later.
 */
export const readPattern: Reader<ToolPattern> = (v, path, faults, strict) => {
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
export const readShellTools: Reader<string[]> = (v, path, faults, strict) => {
  if (!Array.isArray(v)) return fault(faults, path, 'must be an array of tool-name globs');
  if (v.length > MAX_SHELL_TOOLS) return fault(faults, path, `may list at most ${MAX_SHELL_TOOLS} globs`);
  const globs = v.map((g, i) => readToolGlob(g, `${path}[${i}]`, faults, strict));
  return globs.every((g) => g !== undefined) ? [...new Set(globs as string[])] : undefined;
};

export const readToolGlob: Reader<string> = (v, path, faults, strict) => {
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

export const readGrantLimit: Reader<GrantLimit> = (v, path, faults) =>
  (GRANT_LIMITS as readonly unknown[]).includes(v)
    ? (v as GrantLimit)
    : fault(faults, path, `must be one of ${GRANT_LIMITS.join(', ')}`);

/**
 * Roles that may decide, `requester`, and people by id or email (`person:ann`, stored lowercased). A stored
 * document (not strict) is taken as it was written then.
 */
export const readApprovers: Reader<string[]> = (v, path, faults, strict) => {
  const roles = readRoles(v, path, faults, strict);
  if (!roles || !strict) return roles;
  let ok = true;
  const out = roles.map((role, i) => {
    if (isPersonAssignee(role)) {
      const person = readPerson(role, `${path}[${i}]`, faults);
      ok &&= person !== undefined;
      return person ?? role;
    }
    if ((APPROVER_NAMES as readonly string[]).includes(role)) return role;
    ok = false;
    const why =
      role === 'auditor'
        ? 'auditors change nothing: they cannot decide tool calls'
        : role === 'agent'
          ? 'agents cannot decide tool calls: approval comes from people'
          : `is not a role that may decide; use ${APPROVER_NAMES.join(', ')}, or ${PERSON_PREFIX}<id or email> for one person`;
    fault(faults, `${path}[${i}]`, `"${role}": ${why}`);
    return role;
  });
  return ok ? out : undefined;
};

/** One `person:` entry, bounded and lowercased (assignee.ts); a fault at its path otherwise. */
function readPerson(entry: string, path: string, faults: Faults): string | undefined {
  const read = readPersonReference(entry);
  return read.ok ? read.value : fault(faults, path, `"${shorten(entry)}": ${read.why}`);
}

/** A refused value is echoed in its fault, but never at length. */
const shorten = (text: string) => (text.length > 60 ? `${text.slice(0, 59)}…` : text);

/** Seconds: an integer, or a string with a unit (`90s`, `2m`, `1h`, `7d`), as people write them in YAML. */
export function readSeconds(v: unknown, path: string, faults: Faults, max = MAX_TIMEOUT_SECONDS): number | undefined {
  const units: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };
  const m = typeof v === 'string' ? /^(\d{1,7})\s*([smhd])$/.exec(v.trim()) : null;
  const n = typeof v === 'number' ? v : m ? Number(m[1]) * units[m[2]] : NaN;
  return Number.isInteger(n) && n >= 1 && n <= max
    ? n
    : fault(
        faults,
        path,
        `must be whole seconds from 1 to ${max} (a number, or a string such as "90s", "2m", "1h", "7d")`,
      );
}

/** `notify: [push, email]`: channels, each once, in the order given. */
export const readNotify: Reader<NonNullable<EscalationStep['notify']>> = (v, path, faults) =>
  Array.isArray(v) && v.length > 0 && v.every((c) => (NOTIFY_CHANNELS as readonly unknown[]).includes(c))
    ? [...new Set(v as NonNullable<EscalationStep['notify']>)]
    : fault(faults, path, `must be a non-empty list of ${NOTIFY_CHANNELS.join(', ')}`);

/** `escalate: [{after: 120, approvers: [admin], notify: [slack]}, …]`: later steps come later; normalised to seconds. */
export const readEscalation: Reader<EscalationStep[]> = (v, path, faults, strict) => {
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
    const notify = o.notify === undefined ? undefined : readNotify(o.notify, `${at}.notify`, faults, strict);
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
export const readReminders: Reader<number[]> = (v, path, faults) => {
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_ESCALATION_STEPS)
    return fault(faults, path, `must be a list of 1 to ${MAX_ESCALATION_STEPS} durations`);
  const out = v.map((x, i) => readSeconds(x, `${path}[${i}]`, faults));
  if (out.some((x) => x === undefined)) return undefined;
  const sorted = [...new Set(out as number[])].sort((a, b) => b - a);
  return sorted.length === out.length ? sorted : fault(faults, path, 'must not repeat a duration');
};

/** A quorum's `of`: roles as written, people (`person:…`) bounded and lowercased as in `approvers`. */
const readQuorumOf: Reader<string[]> = (v, path, faults, strict) => {
  const entries = readRoles(v, path, faults, strict);
  if (!entries || !strict) return entries;
  let ok = true;
  const out = entries.map((entry, i) => {
    if (!isPersonAssignee(entry)) return entry;
    const person = readPerson(entry, `${path}[${i}]`, faults);
    ok &&= person !== undefined;
    return person ?? entry;
  });
  return ok ? out : undefined;
};

/** `quorum: 2`, or `quorum: {count: 2, of: [finance, person:cfo]}`; normalised to the object form. */
export const readQuorum: Reader<PolicyQuorum> = (v, path, faults, strict) => {
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
  const of = o.of === undefined ? undefined : readQuorumOf(o.of, `${path}.of`, faults, strict);
  if (count === undefined || (o.of !== undefined && of === undefined)) return undefined;
  if (of && strict && of.some((r) => r === 'agent' || r === 'auditor'))
    return fault(faults, `${path}.of`, 'agents and auditors never decide: they cannot count towards a quorum');
  // Each person counts once: named people alone, fewer than the count, could never complete the quorum.
  const people = new Set(of?.filter(isPersonAssignee));
  if (of && strict && people.size === new Set(of).size && people.size < count)
    return fault(
      faults,
      `${path}.of`,
      `names ${people.size} of ${count} people needed and no role: it could never be reached`,
    );
  return of ? { count, of: [...new Set(of)] } : { count };
};

export const readLevel: Reader<SupervisionLevel> = (v, path, faults) =>
  isSupervisionLevel(v) ? v : fault(faults, path, `must be one of ${SUPERVISION_LEVELS.join(', ')}`);

export const readTimeout: Reader<number> = (v, path, faults) =>
  Number.isInteger(v) && (v as number) >= 1 && (v as number) <= MAX_TIMEOUT_SECONDS
    ? (v as number)
    : fault(faults, path, `must be an integer from 1 to ${MAX_TIMEOUT_SECONDS}`);

/** `decisionTimeout`: seconds, or a duration up to 30 days (`"7d"`); another way to write `timeoutSeconds`. */
export const readDecisionTimeout: Reader<number> = (v, path, faults) => readSeconds(v, path, faults);

export const readStepUp: Reader<StepUpMethod> = (v, path, faults) =>
  (STEP_UP_METHODS as readonly unknown[]).includes(v)
    ? (v as StepUpMethod)
    : fault(faults, path, `must be one of ${STEP_UP_METHODS.join(', ')}`);

export const readBoolean: Reader<boolean> = (v, path, faults) =>
  typeof v === 'boolean' ? v : fault(faults, path, 'must be true or false');

export const readNonEmptyString: Reader<string> = (v, path, faults) =>
  typeof v === 'string' && v !== '' ? v : fault(faults, path, 'must be a non-empty string');

export const readRoles: Reader<string[]> = (v, path, faults, strict) => {
  if (!Array.isArray(v) || v.length === 0) return fault(faults, path, 'must be a non-empty array of role names');
  const roles = v.map((role, i) => readNonEmptyString(role, `${path}[${i}]`, faults, strict));
  return roles.every((r) => r !== undefined) ? (roles as string[]) : undefined;
};

export function readNumber(
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
export function readObject(
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

export function fault(faults: Faults, path: string, message: string): undefined {
  faults.push({ path, message });
  return undefined;
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}
