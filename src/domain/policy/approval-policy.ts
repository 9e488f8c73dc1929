import { isPersonAssignee } from './assignee';
import type { ProposedCallFacts, ToolFlags } from './call-facts';
import { decidingRule, triggerNote } from './deciding-rule';
import type { GrantLimit, GrantScope } from './grant-limit';
import type { EscalationStep, PolicyDocument, PolicyQuorum, PolicyRule } from './policy-document';
import type { NotifyChannel, RuleDecision, StepUpMethod } from './policy-shape';
import { SupervisionLevel, strictness } from './supervision-level';

// What the policy sees of a call has a file of its own (deciding-rule.ts needs it too); many import it from here.
export type { ProposedCallFacts, ToolFlags } from './call-facts';

// Grant scopes live in their own module (policy-document needs them too); many import them from here.
export type { GrantLimit, GrantScope } from './grant-limit';

/**
 * A standing grant as the policy sees it: it covers every call of `toolName` within its scope whose
 * arguments match `arguments` (when set), until `expiresAt`. Readers leave revoked and expired grants out
 * (SQL narrows the candidates); the policy still ignores them itself.
 */
export interface GrantFacts {
  id: string;
  toolName: string;
  scope: GrantScope;
  conversationId?: string;
  agentId?: string;
  /** The grant's argument globs, compiled (a ToolPattern): a call must match them all. */
  arguments?: { matchesArguments(args: Record<string, unknown>): boolean };
  /** A revoked grant never covers, even if a reader failed to leave it out. */
  revoked?: boolean;
  /** From this instant on the grant covers nothing (absent: it does not expire). */
  expiresAt?: Date;
}

export interface PolicyContext {
  policy: PolicyDocument;
  policyVersion: number;
  /** The tool as registered in the tenant's registry, if it is. */
  tool?: { flags: ToolFlags; registeredBy: 'admin' | 'agent' };
  grants: readonly GrantFacts[];
  /** Standing denies (an always_reject, or made directly): a call one covers is denied, whatever else would allow it. */
  denies?: readonly GrantFacts[];
  conversation: {
    id: string;
    agentId: string;
    /** `verified`: Tollgate verified the user from their own identity provider token (absent: the agent asserted them). */
    user?: { id: string; roles: readonly string[]; verified?: boolean };
  };
  /** The instant the call is judged at (the app Clock): a grant expired by then covers nothing. */
  now: Date;
}

/** Why a call got its level; recorded on the call as `policy`. */
export interface PolicyVerdict {
  level: SupervisionLevel;
  /** Index of the deciding rule, or null when flags, defaults or a grant decided. */
  rule: number | null;
  policyVersion: number;
  reason: string;
  /** The grant that turned `confirm` into `automatic`, if one did. */
  grantId?: string;
  /** The standing deny that denied the call, if one did. */
  denyId?: string;
  /** For `confirm`/`manual`: who may decide and how long they have. */
  approvers: readonly string[];
  timeoutSeconds: number;
  /** The widest standing grant an `always_allow` on this call may make (the deciding rule's `grants`, else the default). */
  grants: GrantLimit;
  /** The tool's flags as seen (registry first, else annotations); recorded for the audit trail. */
  toolFlags?: ToolFlags;
  /** False when the conversation's user and the agent's owner may not decide (absent: they may). */
  selfApproval?: false;
  /** For `confirm`/`manual`: more than one distinct approval needed. */
  quorum?: PolicyQuorum;
  /** For `confirm`/`manual`: false when an approval relayed by an MCP chat client may not decide (absent: it may). */
  chatApproval?: false;
  /** For `confirm`/`manual`: an approval needs a fresh passkey assertion for the call and its arguments. */
  stepUp?: StepUpMethod;
  /** For `confirm`/`manual`: who else may decide, and who is told, as the call waits. */
  escalate?: EscalationStep[];
  /** For `confirm`/`manual`: seconds before expiry at which people are reminded. */
  remindBefore?: number[];
  /** For `confirm`/`manual`/`notify`: the channels that reach out to people, when the rule names them (absent: all). */
  notify?: NotifyChannel[];
  /** For `confirm`/`manual`: what a person may decide (absent: anything their role allows). */
  allowedDecisions?: RuleDecision[];
  /** For `confirm`/`manual`: a rejection's reason is one of these, unless `rejectFreeText`. */
  rejectReasons?: string[];
  rejectFreeText?: true;
  /** What the rules in shadow mode would have decided, when one of them would have decided this call. */
  shadow?: ShadowVerdict;
}

/** A shadow rule's outcome for a call, recorded but never applied. */
export interface ShadowVerdict {
  rule: number;
  level: SupervisionLevel;
  reason: string;
}

type Outcome = { level: SupervisionLevel; reason: string };

/**
 * Decides how closely a person supervises one proposed call (CONTRACT §5, steps 2–6; halts are
 * checked before this). Pure: the same call and context always give the same verdict.
 */
export const ApprovalPolicy = {
  evaluate(call: ProposedCallFacts, ctx: PolicyContext): PolicyVerdict {
    const verdict = withStandingDeny(evaluateLive(call, ctx), call, ctx);
    if (!ctx.policy.hasShadowRules) return verdict;
    // The same call judged as if the shadow rules were enforced: recorded when one of them would have decided it.
    const policy = ctx.policy.withShadowRulesLive();
    const would = evaluateLive(call, { ...ctx, policy });
    if (would.rule === null || policy.rules[would.rule].mode !== 'shadow') return verdict;
    return { ...verdict, shadow: { rule: would.rule, level: would.level, reason: would.reason } };
  },
};

function evaluateLive(call: ProposedCallFacts, ctx: PolicyContext): PolicyVerdict {
  const { defaults } = ctx.policy;
  const flagsSeen = ctx.tool ? ctx.tool.flags : call.annotations;
  const decision = decidingRule(call, ctx.policy, () => byTool(call, ctx).level);
  const index = decision.index;
  const rule = index === null ? undefined : ctx.policy.rules[index];
  let { level, reason } = rule === undefined || index === null ? byTool(call, ctx) : byRule(rule, index);
  if (decision.explain) reason = decision.explain(reason);
  const counted = rule && index !== null ? triggerNote(rule, index, call) : undefined;
  if (counted) reason = `${reason} (${counted})`;
  let grantId: string | undefined;

  // The document keeps a quorum only when it asks for more than one approval or names roles (`quorum: 1` is dropped).
  const quorum = rule?.quorum;
  const selfApproval = rule?.selfApproval ?? defaults.selfApproval;
  const stepUp = rule?.stepUp;
  // A grant is one person's standing approval: it may not stand in for a quorum of several, nor for another
  // approver where separation of duties asks for one (its maker may be the requester or the agent's owner), nor
  // for a passkey's proof that a person approved this very call.
  if (level === 'confirm' && !quorum && decision.grantable()) {
    const grant = ctx.grants.find((g) => covers(g, call, ctx.conversation, ctx.now));
    if (grant && selfApproval === false) {
      reason = `${reason}; standing grant ${grant.id} not applied: separation of duties (selfApproval: false) needs a person to approve each call`;
    } else if (grant && stepUp) {
      reason = `${reason}; standing grant ${grant.id} not applied: the rule asks for a passkey (stepUp: ${stepUp}) on each approval`;
    } else if (grant) {
      level = 'automatic';
      grantId = grant.id;
      reason = `Allowed by standing grant ${grant.id} (scope ${grant.scope})`;
    }
  }
  // A rule that denies anyway keeps its own reason: holding the role would not change the outcome.
  if (rule?.requireRole !== undefined && level !== 'deny' && !ctx.conversation.user?.roles.includes(rule.requireRole)) {
    level = 'deny';
    grantId = undefined;
    reason = `Permission denied: ${rule.requireRole} role required`;
  }
  if (rule?.requireVerifiedUser && level !== 'deny' && !ctx.conversation.user?.verified) {
    level = 'deny';
    grantId = undefined;
    reason = ctx.conversation.user
      ? `Permission denied: rule ${index} requires a verified user (the conversation's user was asserted by the agent, not verified from their own token)`
      : `Permission denied: rule ${index} requires a verified user (the conversation has none)`;
  }
  let approvers = rule?.approvers ?? defaults.approvers;
  // A person a quorum counts must be able to decide at all: they join the approvers of the call it holds.
  if ((level === 'confirm' || level === 'manual') && quorum?.of) approvers = withPeopleOf(approvers, quorum.of);
  // A passkey proves a present person, not who they are to the call: a requester the agent merely named could be
  // anyone the agent chose. So `requester` decides a step-up call only when Tollgate verified the user.
  if (
    (level === 'confirm' || level === 'manual') &&
    stepUp &&
    approvers.includes('requester') &&
    !ctx.conversation.user?.verified
  ) {
    approvers = approvers.filter((a) => a !== 'requester');
    if (approvers.length === 0) {
      level = 'deny';
      grantId = undefined;
      reason = `Permission denied: rule ${index} lets only the requester approve with a passkey, and the conversation's user was not verified from their own token`;
    } else {
      reason = `${reason}; requester not among the approvers: the conversation's user was not verified from their own token`;
    }
  }
  const held = level === 'confirm' || level === 'manual';

  const chat = held ? chatApprovalOf(level, rule, flagsSeen, selfApproval) : true;
  return {
    level,
    rule: index,
    policyVersion: ctx.policyVersion,
    reason,
    ...(grantId !== undefined && { grantId }),
    approvers,
    timeoutSeconds: rule?.timeoutSeconds ?? defaults.timeoutSeconds,
    grants: rule?.grants ?? defaults.grants,
    ...(selfApproval === false && { selfApproval: false as const }),
    ...(quorum && { quorum: { count: quorum.count, ...(quorum.of && { of: [...quorum.of] }) } }),
    ...(!chat && { chatApproval: false as const }),
    ...(held && stepUp && { stepUp }),
    ...(rule?.escalate && { escalate: rule.escalate.map((s) => ({ ...s })) }),
    ...(rule?.remindBefore && { remindBefore: [...rule.remindBefore] }),
    ...((held || level === 'notify') && rule?.notify && { notify: [...rule.notify] }),
    ...(held && rule?.allowedDecisions && { allowedDecisions: [...rule.allowedDecisions] }),
    ...(held && rule?.rejectReasons && { rejectReasons: [...rule.rejectReasons] }),
    ...(held && rule?.rejectReasons && rule.rejectFreeText && { rejectFreeText: true as const }),
    ...(flagsSeen && {
      toolFlags: {
        isReadOnly: !!flagsSeen.isReadOnly,
        requiresApproval: !!flagsSeen.requiresApproval,
        destructive: !!flagsSeen.destructive,
      },
    }),
  };
}

/**
 * Whether an MCP chat client's relayed answer may approve a held call: only a `confirm` call of a tool not flagged
 * destructive, without separation of duties, a quorum or a passkey step-up, and whose rule does not say
 * `allowChatApproval: false`.
 * The rule's `true` never reaches past these exclusions: the client, not a person seen by Tollgate, answered.
 */
function chatApprovalOf(
  level: SupervisionLevel,
  rule: Readonly<PolicyRule> | undefined,
  flags: ToolFlags | undefined,
  selfApproval: boolean,
): boolean {
  if (level !== 'confirm' || flags?.destructive || selfApproval === false || rule?.quorum || rule?.stepUp) return false;
  return rule?.allowChatApproval !== false;
}

/** `approvers`, then each person `of` names (`person:…`) that it does not list yet. */
function withPeopleOf(approvers: string[], of: readonly string[]): string[] {
  const people = of.filter((a) => isPersonAssignee(a) && !approvers.includes(a));
  return people.length === 0 ? approvers : [...approvers, ...people];
}

function byRule(rule: Readonly<PolicyRule>, index: number): Outcome {
  const fallback =
    rule.level === 'deny'
      ? `Denied by policy rule ${index} (${rule.match})`
      : `Rule ${index} (${rule.match}): ${rule.level}`;
  return { level: rule.level, reason: rule.reason ?? fallback };
}

/** Steps 3 and 4: the registry's flags, else the proposal's annotations, else `defaults.unknownTools`. */
function byTool(call: ProposedCallFacts, ctx: PolicyContext): Outcome {
  const { unknownTools, trustAgentFlags } = ctx.policy.defaults;
  const flags = ctx.tool ? ctx.tool.flags : call.annotations;
  if (!flags) return { level: unknownTools, reason: `Unknown tool: defaults.unknownTools = ${unknownTools}` };

  const asking = [flags.requiresApproval && 'requiresApproval', flags.destructive && 'destructive']
    .filter(Boolean)
    .join(', ');
  const [level, why]: [SupervisionLevel, string] = flags.isReadOnly
    ? ['automatic', 'isReadOnly']
    : asking
      ? ['confirm', asking]
      : ['automatic', 'no flags set'];
  const reason = `Tool flags${ctx.tool ? '' : ' (annotations)'}: ${why} → ${level}`;
  const trusted = ctx.tool?.registeredBy === 'admin' || trustAgentFlags;
  if (trusted || strictness(level) <= strictness(unknownTools)) return { level, reason };
  return {
    level: unknownTools,
    reason: `${reason}, raised to defaults.unknownTools = ${unknownTools} (agent flags are not trusted)`,
  };
}

function covers(
  grant: GrantFacts,
  call: ProposedCallFacts,
  conversation: PolicyContext['conversation'],
  now: Date,
): boolean {
  if (grant.toolName !== call.toolName || grant.revoked) return false;
  if (grant.expiresAt !== undefined && grant.expiresAt.getTime() <= now.getTime()) return false;
  if (grant.arguments && !grant.arguments.matchesArguments(call.arguments)) return false;
  switch (grant.scope) {
    case 'tenant':
      return true;
    case 'agent':
      return grant.agentId === conversation.agentId;
    case 'conversation':
      return grant.conversationId === conversation.id;
  }
}

/**
 * Standing denies (part 4 of issue 28): a person's "always reject" in a scope, as grants are for allows. One that
 * covers the call (tool, scope, argument globs, not expired nor revoked) denies it before any grant or rule could
 * let it through; a call the policy denies anyway keeps its own reason.
 */
function withStandingDeny(verdict: PolicyVerdict, call: ProposedCallFacts, ctx: PolicyContext): PolicyVerdict {
  if (verdict.level === 'deny' || !ctx.denies?.length) return verdict;
  const deny = ctx.denies.find((d) => covers(d, call, ctx.conversation, ctx.now));
  if (!deny) return verdict;
  const { grantId: _grant, ...rest } = verdict;
  return {
    ...rest,
    level: 'deny',
    denyId: deny.id,
    reason: `Denied by standing deny ${deny.id} (scope ${deny.scope})`,
  };
}
