import type { GrantLimit, GrantScope } from './grant-limit';
import type { PolicyDocument, PolicyRule, PolicyRuleWhen } from './policy-document';
import { SupervisionLevel, strictness } from './supervision-level';

/** The three flags a tool (or a proposal's `annotations`) may carry. */
export interface ToolFlags {
  isReadOnly?: boolean;
  requiresApproval?: boolean;
  destructive?: boolean;
}

// Grant scopes live in their own module (policy-document needs them too); many import them from here.
export type { GrantLimit, GrantScope } from './grant-limit';

/** A standing grant as the policy sees it: it covers every call of `toolName` within its scope. */
export interface GrantFacts {
  id: string;
  toolName: string;
  scope: GrantScope;
  conversationId?: string;
  agentId?: string;
}

/** What the policy may look at in one proposed call. */
export interface ProposedCallFacts {
  toolName: string;
  arguments: Record<string, unknown>;
  annotations?: ToolFlags;
  confidence?: number;
  estimatedCost?: number;
}

export interface PolicyContext {
  policy: PolicyDocument;
  policyVersion: number;
  /** The tool as registered in the tenant's registry, if it is. */
  tool?: { flags: ToolFlags; registeredBy: 'admin' | 'agent' };
  grants: readonly GrantFacts[];
  conversation: { id: string; agentId: string; user?: { id: string; roles: readonly string[] } };
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
  /** For `confirm`/`manual`: who may decide and how long they have. */
  approvers: readonly string[];
  timeoutSeconds: number;
  /** The widest standing grant an `always_allow` on this call may make (the deciding rule's `grants`, else the default). */
  grants: GrantLimit;
  /** The tool's flags as seen (registry first, else annotations); recorded for the audit trail. */
  toolFlags?: ToolFlags;
}

type Outcome = { level: SupervisionLevel; reason: string };

/**
 * Decides how closely a person supervises one proposed call (CONTRACT §5, steps 2–6; halts are
 * checked before this). Pure: the same call and context always give the same verdict.
 */
export const ApprovalPolicy = {
  evaluate(call: ProposedCallFacts, ctx: PolicyContext): PolicyVerdict {
    const { defaults } = ctx.policy;
    const flagsSeen = ctx.tool ? ctx.tool.flags : call.annotations;
    const index = decidingRule(call, ctx.policy);
    const rule = index === null ? undefined : ctx.policy.rules[index];
    let { level, reason } = rule === undefined || index === null ? byTool(call, ctx) : byRule(rule, index);
    let grantId: string | undefined;

    if (level === 'confirm') {
      const grant = ctx.grants.find((g) => covers(g, call, ctx.conversation));
      if (grant) {
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

    return {
      level,
      rule: index,
      policyVersion: ctx.policyVersion,
      reason,
      ...(grantId !== undefined && { grantId }),
      approvers: rule?.approvers ?? defaults.approvers,
      timeoutSeconds: rule?.timeoutSeconds ?? defaults.timeoutSeconds,
      grants: rule?.grants ?? defaults.grants,
      ...(flagsSeen && {
        toolFlags: { isReadOnly: !!flagsSeen.isReadOnly, requiresApproval: !!flagsSeen.requiresApproval, destructive: !!flagsSeen.destructive },
      }),
    };
  },
};

/** The strictest matching rule, the earlier one on a tie; null when none matches. */
function decidingRule(call: ProposedCallFacts, policy: PolicyDocument): number | null {
  const { rules, patterns } = policy;
  let best: number | null = null;
  let bestStrictness = Infinity;
  for (const i of policy.rulesForTool(call.toolName)) {
    const s = strictness(rules[i].level);
    // A rule no stricter than the best so far cannot decide, so skip matching it at all.
    if (s >= bestStrictness || !conditionsHold(rules[i].when, call) || !patterns[i].matchesArguments(call.arguments)) continue;
    best = i;
    bestStrictness = s;
    if (s === 0) break;
  }
  return best;
}

function conditionsHold(when: PolicyRuleWhen | undefined, call: ProposedCallFacts): boolean {
  if (!when) return true;
  if (when.confidenceBelow !== undefined && !(typeof call.confidence === 'number' && call.confidence < when.confidenceBelow)) return false;
  if (when.estimatedCostAbove !== undefined && !(typeof call.estimatedCost === 'number' && call.estimatedCost > when.estimatedCostAbove)) return false;
  return true;
}

function byRule(rule: Readonly<PolicyRule>, index: number): Outcome {
  const fallback = rule.level === 'deny' ? `Denied by policy rule ${index} (${rule.match})` : `Rule ${index} (${rule.match}): ${rule.level}`;
  return { level: rule.level, reason: rule.reason ?? fallback };
}

/** Steps 3 and 4: the registry's flags, else the proposal's annotations, else `defaults.unknownTools`. */
function byTool(call: ProposedCallFacts, ctx: PolicyContext): Outcome {
  const { unknownTools, trustAgentFlags } = ctx.policy.defaults;
  const flags = ctx.tool ? ctx.tool.flags : call.annotations;
  if (!flags) return { level: unknownTools, reason: `Unknown tool: defaults.unknownTools = ${unknownTools}` };

  const asking = [flags.requiresApproval && 'requiresApproval', flags.destructive && 'destructive'].filter(Boolean).join(', ');
  const [level, why]: [SupervisionLevel, string] = flags.isReadOnly ? ['automatic', 'isReadOnly'] : asking ? ['confirm', asking] : ['automatic', 'no flags set'];
  const reason = `Tool flags${ctx.tool ? '' : ' (annotations)'}: ${why} → ${level}`;
  const trusted = ctx.tool?.registeredBy === 'admin' || trustAgentFlags;
  if (trusted || strictness(level) <= strictness(unknownTools)) return { level, reason };
  return { level: unknownTools, reason: `${reason}, raised to defaults.unknownTools = ${unknownTools} (agent flags are not trusted)` };
}

function covers(grant: GrantFacts, call: ProposedCallFacts, conversation: PolicyContext['conversation']): boolean {
  if (grant.toolName !== call.toolName) return false;
  switch (grant.scope) {
    case 'tenant':
      return true;
    case 'agent':
      return grant.agentId === conversation.agentId;
    case 'conversation':
      return grant.conversationId === conversation.id;
  }
}
