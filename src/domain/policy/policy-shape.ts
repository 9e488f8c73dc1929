/* The shape of a tenant's policy document (CONTRACT §5) and its bounds; policy-document.ts reads and holds one. */
import type { GrantLimit } from './grant-limit';
import type { SupervisionLevel } from './supervision-level';

export interface PolicyDefaults {
  /** Level for a tool neither registered, annotated nor matched by a rule. */
  unknownTools: SupervisionLevel;
  timeoutSeconds: number;
  /** Roles that may decide; `requester` is the conversation's user; `person:<id or email>` one person. */
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
  /**
   * Argument paths whose values are secrets, for every tool (`password`, `headers.authorization`, `*token*`): shown
   * and recorded masked, with a short digest; each rule may name more for its tools (`redactionsFor`).
   */
  redact?: string[];
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
  /**
   * Only approvals by people holding one of these roles, or named here (`person:<id or email>`), count (and only
   * they may approve). A named person may decide the call even when `approvers` does not name them.
   */
  of?: string[];
}

/** All given conditions must hold; each never matches a call without its field. */
export interface PolicyRuleWhen {
  confidenceBelow?: number;
  estimatedCostAbove?: number;
  /** More than `count` calls of the rule's tools within `per` seconds, this one included, in the `by` scope. */
  rateAbove?: RateTrigger;
  /** Their `estimatedCost` summed over `per` seconds, this call's included, above `total`, in the `by` scope. */
  costAbove?: CostTrigger;
}

/** Whose calls a velocity or budget trigger counts: the proposing agent's, the conversation's, or the whole tenant's. */
export const TRIGGER_SCOPES = ['agent', 'conversation', 'tenant'] as const;
export type TriggerScope = (typeof TRIGGER_SCOPES)[number];
export interface RateTrigger {
  count: number;
  /** The window, in seconds (written `"1h"`, `"1d"`…). */
  per: number;
  by: TriggerScope;
}
export interface CostTrigger {
  total: number;
  per: number;
  by: TriggerScope;
}
/** The longest window a trigger may look back over: counting further back is a report, not a control. */
export const MAX_TRIGGER_WINDOW_SECONDS = 31 * 86_400;
export const MAX_TRIGGER_COUNT = 1_000_000;

/** What a person may answer to a held call: `edit` is an approval with changed arguments. */
export const RULE_DECISIONS = ['approve', 'edit', 'reject', 'always_allow', 'respond'] as const;
export type RuleDecision = (typeof RULE_DECISIONS)[number];
/** How many reasons a rule may offer, and how long each may be: choices on a card, not an essay. */
export const MAX_REJECT_REASONS = 20;
export const MAX_REJECT_REASON_LENGTH = 200;
/** Paths a `redact` list may name, and how long each may be. */
export const MAX_REDACT_PATHS = 50;
export const MAX_REDACT_PATH_LENGTH = 200;
/** `shadow`: evaluated and recorded (the verdict's `shadow`), never deciding; absent: the rule decides. */
export const RULE_MODES = ['enforce', 'shadow'] as const;
export type RuleMode = (typeof RULE_MODES)[number];

/** Changes to the control plane (policy, tenant-wide grants, resumes, webhooks) need this many distinct admins. */
export interface PolicyGovernance {
  quorum: number;
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
  /**
   * Whether a decision relayed by an MCP client (the chat's approval form, `via: mcp`) may approve the calls this
   * rule holds. Absent: yes for `confirm` calls of tools not flagged destructive, without `selfApproval: false` and
   * without a quorum; false: never. True cannot widen that (a parsed document refuses it beside a quorum,
   * `selfApproval: false` or another level than `confirm`; a destructive tool stays excluded when judged).
   */
  allowChatApproval?: boolean;
  /**
   * `passkey`: a person approves the calls this rule holds only with a fresh passkey assertion (user verification
   * required) made for the call and its exact arguments; no standing grant covers them and no chat approves them.
   */
  stepUp?: StepUpMethod;
  /**
   * True: the calls this rule matches are denied unless the conversation's end user was verified by Tollgate from
   * their own identity provider token (`user.token`), not merely asserted by the agent.
   */
  requireVerifiedUser?: boolean;
  /** While a held call waits: after each step's seconds, more people may decide it and channels are told. */
  escalate?: EscalationStep[];
  /** Seconds before a held call expires at which the channels remind people of it (each once). */
  remindBefore?: number[];
  /**
   * The channels that reach out to people about the calls this rule holds or tells of (`[push, email]`); absent: all
   * of them. The inbox lists held calls and webhooks get what they subscribed to whatever this says.
   */
  notify?: NotifyChannel[];
  /**
   * True: the string arguments this rule names are shell command lines, whatever `defaults.shellTools` says;
   * false: matched as written even on a shell tool. Absent: shell when the tool is one of `defaults.shellTools`.
   */
  shell?: boolean;
  /** Argument paths whose values are masked for the calls of the tools this rule matches, whatever its level. */
  redact?: string[];
  /** What a person may decide on the calls this rule holds (absent: all); others get `decision_not_allowed`. */
  allowedDecisions?: RuleDecision[];
  /** A rejection's reason must be one of these (unless `rejectFreeText`); shown as choices. */
  rejectReasons?: string[];
  /** With `rejectReasons`: true lets a person write their own reason instead. */
  rejectFreeText?: boolean;
  /** `shadow`: recorded as what it would have decided, never deciding (see RULE_MODES). */
  mode?: RuleMode;
  reason?: string;
}

/** The proofs of presence a rule may ask of an approval. */
export const STEP_UP_METHODS = ['passkey'] as const;
export type StepUpMethod = (typeof STEP_UP_METHODS)[number];

export interface PolicyDocumentJson {
  defaults: PolicyDefaults;
  rules: PolicyRule[];
  /** Absent: one admin changes the control plane alone. */
  governance?: PolicyGovernance;
}

export const MAX_RULES = 1000;
/** A hold may last up to 30 days (`decisionTimeout: "30d"`): it is a row with a deadline, kept across restarts. */
export const MAX_TIMEOUT_SECONDS = 30 * 86_400;
/** A quorum larger than this is a typo, not a control: no call should wait on more people. */
export const MAX_QUORUM = 10;
/** Escalation steps and reminders a rule may list: a handful is a process, more is noise. */
export const MAX_ESCALATION_STEPS = 5;
/** The channels an escalation step may tell; push and email reach the people the call's approvers name. */
export const NOTIFY_CHANNELS = ['slack', 'webhook', 'inbox', 'push', 'email'] as const;
export type NotifyChannel = (typeof NOTIFY_CHANNELS)[number];

/** One step of an escalation: `after` seconds of waiting, these approvers may decide too, and these channels are told. */
export interface EscalationStep {
  after: number;
  approvers?: string[];
  notify?: NotifyChannel[];
}

/** What a document's defaults are when it leaves them out (and a tenant's policy before its first PUT). */
export const BUILT_IN_DEFAULTS: PolicyDefaults = {
  unknownTools: 'confirm',
  timeoutSeconds: 300,
  approvers: ['approver', 'admin'],
  trustAgentFlags: true,
  grants: 'tenant',
  selfApproval: true,
};

/**
 * Who may be listed in `approvers`: the roles that may decide (CONTRACT §2), and `requester`, the conversation's
 * user; besides these, one person by id or email (`person:ann`, see assignee.ts). Auditors change nothing and
 * agents never decide, so a policy naming either (or a typo, which would make calls no one can decide) is refused.
 */
export const APPROVER_NAMES = ['approver', 'admin', 'requester'] as const;
export type ApproverName = (typeof APPROVER_NAMES)[number];
/** An entry of `approvers` (or of a quorum's `of`) naming one person, lowercased: `person:ann@example.com`. */
export type PersonAssignee = `person:${string}`;
export type Approver = ApproverName | PersonAssignee;
