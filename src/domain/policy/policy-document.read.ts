/* Reading a policy document's defaults and rules, each field by its reader (policy-fields.read.ts). */
import type { ToolPattern } from './tool-pattern';
import {
  fault,
  ReadContext,
  Reader,
  readApprovers,
  readBoolean,
  readEscalation,
  readGrantLimit,
  readLevel,
  readNonEmptyString,
  readNotify,
  readObject,
  readPattern,
  readQuorum,
  readReminders,
  readShellTools,
  readStepUp,
  readTimeout,
  readDecisionTimeout,
} from './policy-fields.read';
import { readAllowedDecisions, readMode, readRedact, readRejectReasons, readWhen } from './policy-rule-extras.read';
import { BUILT_IN_DEFAULTS, MAX_RULES, PolicyDefaults, PolicyRule } from './policy-shape';

export function readDefaults(raw: unknown, { faults, strict }: ReadContext): PolicyDefaults {
  const o =
    raw === undefined
      ? {}
      : readObject(
          raw,
          'defaults',
          [
            'unknownTools',
            'timeoutSeconds',
            'decisionTimeout',
            'approvers',
            'trustAgentFlags',
            'grants',
            'selfApproval',
            'shellTools',
            'redact',
          ],
          faults,
        );
  const field = <T>(name: keyof PolicyDefaults | 'decisionTimeout', read: Reader<T>) =>
    o?.[name] === undefined ? undefined : read(o[name], `defaults.${name}`, faults, strict);
  if (o?.timeoutSeconds !== undefined && o?.decisionTimeout !== undefined)
    fault(faults, 'defaults.decisionTimeout', 'is another way to write timeoutSeconds: give one of them');
  return {
    unknownTools: field('unknownTools', readLevel) ?? BUILT_IN_DEFAULTS.unknownTools,
    timeoutSeconds:
      field('timeoutSeconds', readTimeout) ??
      field('decisionTimeout', readDecisionTimeout) ??
      BUILT_IN_DEFAULTS.timeoutSeconds,
    approvers: field('approvers', readApprovers) ?? [...BUILT_IN_DEFAULTS.approvers],
    trustAgentFlags: field('trustAgentFlags', readBoolean) ?? BUILT_IN_DEFAULTS.trustAgentFlags,
    grants: field('grants', readGrantLimit) ?? BUILT_IN_DEFAULTS.grants,
    selfApproval: field('selfApproval', readBoolean) ?? BUILT_IN_DEFAULTS.selfApproval,
    ...(o?.shellTools !== undefined && { shellTools: field('shellTools', readShellTools) }),
    ...(o?.redact !== undefined && { redact: field('redact', readRedact) }),
  };
}

export function readRules(raw: unknown, ctx: ReadContext): { rule: PolicyRule; pattern: ToolPattern }[] {
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
      'decisionTimeout',
      'grants',
      'selfApproval',
      'quorum',
      'allowChatApproval',
      'stepUp',
      'requireVerifiedUser',
      'escalate',
      'remindBefore',
      'notify',
      'shell',
      'redact',
      'allowedDecisions',
      'rejectReasons',
      'rejectFreeText',
      'mode',
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
  if (o.timeoutSeconds !== undefined && o.decisionTimeout !== undefined)
    fault(faults, `${path}.decisionTimeout`, 'is another way to write timeoutSeconds: give one of them');
  const timeoutSeconds = optional('timeoutSeconds', readTimeout) ?? optional('decisionTimeout', readDecisionTimeout);
  const grants = optional('grants', readGrantLimit);
  const selfApproval = optional('selfApproval', readBoolean);
  const quorum = optional('quorum', readQuorum);
  const allowChatApproval = optional('allowChatApproval', readBoolean);
  const stepUp = optional('stepUp', readStepUp);
  const requireVerifiedUser = optional('requireVerifiedUser', readBoolean);
  const escalate = optional('escalate', readEscalation);
  const remindBefore = optional('remindBefore', readReminders);
  const notify = optional('notify', readNotify);
  const shell = optional('shell', readBoolean);
  const redact = optional('redact', readRedact);
  const allowedDecisions = optional('allowedDecisions', readAllowedDecisions);
  const rejectReasons = optional('rejectReasons', readRejectReasons);
  const rejectFreeText = optional('rejectFreeText', readBoolean);
  const mode = optional('mode', readMode);
  const reason = optional('reason', readNonEmptyString);
  // A chat client's answer is no proof a person saw the call: true may not reach past the exclusions.
  const chatTooWide =
    allowChatApproval !== true || level === undefined
      ? undefined
      : level !== 'confirm'
        ? `applies to confirm rules only, not to ${level}`
        : selfApproval === false
          ? 'cannot be true with selfApproval: false: the chat client may be the requester itself'
          : stepUp
            ? "cannot be true with stepUp: a chat client cannot sign with the person's passkey"
            : quorum && (quorum.count > 1 || quorum.of)
              ? 'cannot be true with a quorum: each approval must be a person deciding in Tollgate'
              : undefined;
  // Named even when the match is faulty too, so every fault of the rule is told at once.
  if (strict && chatTooWide) fault(faults, `${path}.allowChatApproval`, chatTooWide);
  if (!pattern || !level || (strict && chatTooWide)) return undefined;
  if (strict && shell === true && pattern.argumentNames.length === 0) {
    return fault(
      faults,
      `${path}.shell`,
      `applies to a match that names the command argument, as in ${pattern.toString()}(cmd=rm *)`,
    );
  }
  if (strict && stepUp && level !== 'confirm' && level !== 'manual') {
    return fault(faults, `${path}.stepUp`, `applies to calls a person decides (confirm, manual), not to ${level}`);
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
  const decisionFault = strict && level !== undefined ? decisionFieldsFault(level, o) : undefined;
  if (decisionFault) return fault(faults, `${path}.${decisionFault[0]}`, decisionFault[1]);
  if (strict && notify && level !== 'confirm' && level !== 'manual' && level !== 'notify')
    return fault(
      faults,
      `${path}.notify`,
      `applies to calls people are told of (confirm, manual, notify), not to ${level}`,
    );
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
  if (allowChatApproval !== undefined) rule.allowChatApproval = allowChatApproval;
  if (stepUp !== undefined) rule.stepUp = stepUp;
  if (requireVerifiedUser !== undefined) rule.requireVerifiedUser = requireVerifiedUser;
  if (escalate !== undefined) rule.escalate = escalate;
  if (remindBefore !== undefined) rule.remindBefore = remindBefore;
  if (notify !== undefined) rule.notify = notify;
  if (shell !== undefined) rule.shell = shell;
  if (redact !== undefined) rule.redact = redact;
  if (allowedDecisions !== undefined) rule.allowedDecisions = allowedDecisions;
  if (rejectReasons !== undefined) rule.rejectReasons = rejectReasons;
  if (rejectFreeText !== undefined) rule.rejectFreeText = rejectFreeText;
  // `enforce` is the default written out: left out, as `quorum: 1` is.
  if (mode === 'shadow') rule.mode = mode;
  if (reason !== undefined) rule.reason = reason;
  return { rule, pattern };
}

/**
 * What a person may decide only matters on a call a person decides; reasons are for rejections, and free text for
 * reasons. Answers the faulty field and why, or undefined.
 */
function decisionFieldsFault(level: string, o: Record<string, unknown>): [string, string] | undefined {
  const held = level === 'confirm' || level === 'manual';
  for (const name of ['allowedDecisions', 'rejectReasons', 'rejectFreeText'])
    if (o[name] !== undefined && !held)
      return [name, `applies to calls a person decides (confirm, manual), not to ${level}`];
  if (o.rejectFreeText !== undefined && o.rejectReasons === undefined)
    return ['rejectFreeText', 'applies with rejectReasons: without them any reason may be written'];
  const allowed = o.allowedDecisions as readonly string[] | undefined;
  if (o.rejectReasons !== undefined && allowed && !allowed.includes('reject'))
    return ['rejectReasons', 'needs "reject" among allowedDecisions'];
  return undefined;
}
