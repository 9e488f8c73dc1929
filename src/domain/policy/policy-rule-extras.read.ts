/* Readers of the fields that shape what people see and may decide, and when routine calls are held (issue 28). */
import { Faults, fault, Reader, readNumber, readObject, readSeconds } from './policy-fields.read';
import {
  CostTrigger,
  MAX_QUORUM,
  MAX_REDACT_PATH_LENGTH,
  MAX_REDACT_PATHS,
  MAX_REJECT_REASON_LENGTH,
  MAX_REJECT_REASONS,
  MAX_TRIGGER_COUNT,
  MAX_TRIGGER_WINDOW_SECONDS,
  PolicyGovernance,
  PolicyRuleWhen,
  RateTrigger,
  RULE_DECISIONS,
  RULE_MODES,
  RuleDecision,
  RuleMode,
  TRIGGER_SCOPES,
  TriggerScope,
} from './policy-shape';

/**
 * `redact: [password, headers.authorization, "*token*"]`: dotted paths, or globs on a key name at any depth;
 * each at most MAX_REDACT_PATH_LENGTH, without empty segments. Kept as written, each once.
 */
export const readRedact: Reader<string[]> = (v, path, faults) => {
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_REDACT_PATHS)
    return fault(faults, path, `must be a list of 1 to ${MAX_REDACT_PATHS} argument paths`);
  let ok = true;
  v.forEach((entry, i) => {
    const why =
      typeof entry !== 'string' || entry.trim() === ''
        ? 'must be a non-empty string'
        : entry.length > MAX_REDACT_PATH_LENGTH
          ? `must be at most ${MAX_REDACT_PATH_LENGTH} characters`
          : entry.split('.').some((segment) => segment === '')
            ? 'must be a dotted path without empty segments, as in headers.authorization'
            : undefined;
    if (why) ok = fault(faults, `${path}[${i}]`, why) ?? false;
  });
  return ok ? [...new Set(v as string[])] : undefined;
};

/** `allowedDecisions: [approve, reject]`: each once, at least one. */
export const readAllowedDecisions: Reader<RuleDecision[]> = (v, path, faults) =>
  Array.isArray(v) && v.length > 0 && v.every((d) => (RULE_DECISIONS as readonly unknown[]).includes(d))
    ? [...new Set(v as RuleDecision[])]
    : fault(faults, path, `must be a non-empty list of ${RULE_DECISIONS.join(', ')}`);

/** `rejectReasons: ["Wrong vendor", "Amount too high"]`: distinct, non-empty, bounded. */
export const readRejectReasons: Reader<string[]> = (v, path, faults) => {
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_REJECT_REASONS)
    return fault(faults, path, `must be a list of 1 to ${MAX_REJECT_REASONS} reasons`);
  const bad = v.findIndex((r) => typeof r !== 'string' || r.trim() === '' || r.length > MAX_REJECT_REASON_LENGTH);
  if (bad >= 0)
    return fault(
      faults,
      `${path}[${bad}]`,
      `must be a non-empty string of at most ${MAX_REJECT_REASON_LENGTH} characters`,
    );
  const reasons = (v as string[]).map((r) => r.trim());
  return new Set(reasons).size === reasons.length ? reasons : fault(faults, path, 'must not repeat a reason');
};

export const readMode: Reader<RuleMode> = (v, path, faults) =>
  (RULE_MODES as readonly unknown[]).includes(v)
    ? (v as RuleMode)
    : fault(faults, path, `must be one of ${RULE_MODES.join(', ')}`);

/** `governance: {quorum: 2}`: distinct admins a control-plane change needs, the one who asks counted. */
export const readGovernance: Reader<PolicyGovernance> = (v, path, faults) => {
  const o = readObject(v, path, ['quorum'], faults);
  if (!o) return undefined;
  const quorum = o.quorum;
  return Number.isInteger(quorum) && (quorum as number) >= 1 && (quorum as number) <= MAX_QUORUM
    ? { quorum: quorum as number }
    : fault(faults, `${path}.quorum`, `must be an integer from 1 to ${MAX_QUORUM}`);
};

/** A trigger's window: seconds or a duration (`"1h"`, `"1d"`), up to MAX_TRIGGER_WINDOW_SECONDS. */
function readWindow(v: unknown, path: string, faults: Faults): number | undefined {
  const seconds = readSeconds(v, path, faults, MAX_TRIGGER_WINDOW_SECONDS);
  return seconds;
}

function readScope(v: unknown, path: string, faults: Faults): TriggerScope | undefined {
  return (TRIGGER_SCOPES as readonly unknown[]).includes(v)
    ? (v as TriggerScope)
    : fault(faults, path, `must be one of ${TRIGGER_SCOPES.join(', ')}`);
}

/** `rateAbove: {count: 20, per: "1h", by: agent}` */
export const readRateTrigger: Reader<RateTrigger> = (v, path, faults) => {
  const o = readObject(v, path, ['count', 'per', 'by'], faults);
  if (!o) return undefined;
  const count =
    Number.isInteger(o.count) && (o.count as number) >= 0 && (o.count as number) <= MAX_TRIGGER_COUNT
      ? (o.count as number)
      : fault(faults, `${path}.count`, `must be an integer from 0 to ${MAX_TRIGGER_COUNT}`);
  const per =
    o.per === undefined ? fault(faults, `${path}.per`, 'is required') : readWindow(o.per, `${path}.per`, faults);
  const by = o.by === undefined ? fault(faults, `${path}.by`, 'is required') : readScope(o.by, `${path}.by`, faults);
  return count === undefined || per === undefined || by === undefined ? undefined : { count, per, by };
};

/** `costAbove: {total: 500, per: "1d", by: tenant}` */
export const readCostTrigger: Reader<CostTrigger> = (v, path, faults) => {
  const o = readObject(v, path, ['total', 'per', 'by'], faults);
  if (!o) return undefined;
  const total = readNumber(o.total, `${path}.total`, faults, 0, Number.MAX_VALUE, 'must be a number of at least 0');
  const per =
    o.per === undefined ? fault(faults, `${path}.per`, 'is required') : readWindow(o.per, `${path}.per`, faults);
  const by = o.by === undefined ? fault(faults, `${path}.by`, 'is required') : readScope(o.by, `${path}.by`, faults);
  return total === undefined || per === undefined || by === undefined ? undefined : { total, per, by };
};

/** All given conditions must hold (see PolicyRuleWhen). */
export const readWhen: Reader<PolicyRuleWhen> = (v, path, faults, strict) => {
  const o = readObject(v, path, ['confidenceBelow', 'estimatedCostAbove', 'rateAbove', 'costAbove'], faults);
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
  if (o.rateAbove !== undefined) {
    const rate = readRateTrigger(o.rateAbove, `${path}.rateAbove`, faults, strict);
    if (rate) when.rateAbove = rate;
  }
  if (o.costAbove !== undefined) {
    const cost = readCostTrigger(o.costAbove, `${path}.costAbove`, faults, strict);
    if (cost) when.costAbove = cost;
  }
  return when;
};
