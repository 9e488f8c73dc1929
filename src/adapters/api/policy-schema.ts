import { MAX_PERSON_REFERENCE, PERSON_PREFIX } from '../../domain/policy/assignee';
import { GRANT_LIMITS } from '../../domain/policy/grant-limit';
import {
  APPROVER_NAMES,
  DEFAULT_SHELL_TOOLS,
  MAX_ESCALATION_STEPS,
  MAX_QUORUM,
  MAX_RULES,
  MAX_SHELL_TOOLS,
  MAX_REDACT_PATH_LENGTH,
  MAX_REDACT_PATHS,
  MAX_REJECT_REASON_LENGTH,
  MAX_REJECT_REASONS,
  MAX_TIMEOUT_SECONDS,
  MAX_TRIGGER_COUNT,
  MAX_TRIGGER_WINDOW_SECONDS,
  NOTIFY_CHANNELS,
  RULE_DECISIONS,
  TRIGGER_SCOPES,
} from '../../domain/policy/policy-document';
import { SUPERVISION_LEVELS } from '../../domain/policy/supervision-level';
import { MAX_PATTERN_LENGTH, MAX_PATTERN_WILDCARDS } from '../../domain/policy/tool-pattern';

/**
 * The JSON Schema (draft 2020-12) of a policy document, served at GET /schemas/policy.json so editors validate
 * and complete `policy.yaml`, and embedded in the OpenAPI document as PUT /v1/policy's body. It is built from the
 * parser's own bounds (`PolicyDocument.parse`), and test/e2e/policy-schema.e2e-spec.ts checks that both give the
 * same verdict on generated documents. What it cannot say: an argument named twice in one `match`
 * (`f(a=1, a=2)`), a quorum that names fewer people than its count and no role, and lengths counted in UTF-16
 * units rather than characters; the server refuses all three.
 */

type Schema = Record<string, unknown>;

export const POLICY_SCHEMA_PATH = '/schemas/policy.json';
export const SCHEMA_CONTENT_TYPE = 'application/schema+json';

/**
 * `match`: a glob on the tool name, or `Tool(name=glob, …)`. The first argument must read `name=`; later ones
 * start at a comma followed by `name=`, so anything after the first `=` is the parser's to split.
 */
const MATCH_SYNTAX = String.raw`^(?:[^()]*[^()\s][^()]*|[^()]*[^()\s][^()]*\(\s*[\w$.-]+\s*=[\s\S]*\))$`;
/** `person:` then 1 to MAX_PERSON_REFERENCE code points, none of them control, format or whitespace (assignee.ts). */
const PERSON_SYNTAX = String.raw`^${PERSON_PREFIX}[^\p{C}\p{Z}]{1,${MAX_PERSON_REFERENCE}}$`;
/** At most MAX_PATTERN_WILDCARDS of `*` and `?`. */
const MATCH_WILDCARDS = String.raw`^[^*?]*(?:[*?][^*?]*){0,${MAX_PATTERN_WILDCARDS}}$`;

const defs: Record<string, Schema> = {
  level: {
    description:
      'How closely a person supervises a call, strictest first: deny (rejected), manual (a person, every time), confirm (a person unless a standing grant covers it), notify (runs at once; recorded for people to be told), automatic (runs at once).',
    type: 'string',
    enum: [...SUPERVISION_LEVELS],
  },
  approvers: {
    description: `Who may decide a held call: roles, "requester" for the conversation's end user, or one person as ${PERSON_PREFIX}<id or email> (matched case-insensitively against the token's sub or email; stored lowercased). Never auditor or agent.`,
    type: 'array',
    minItems: 1,
    items: { anyOf: [{ type: 'string', enum: [...APPROVER_NAMES] }, { $ref: '#/$defs/person' }] },
  },
  person: {
    description: `One person, by the id (sub) or email their token carries: ${PERSON_PREFIX} then at most ${MAX_PERSON_REFERENCE} characters, no whitespace or control characters.`,
    type: 'string',
    pattern: PERSON_SYNTAX,
  },
  timeoutSeconds: {
    description: 'Seconds a held call waits for a person before it expires.',
    type: 'integer',
    minimum: 1,
    maximum: MAX_TIMEOUT_SECONDS,
  },
  grants: {
    description: 'The widest standing grant an always_allow may make: none, conversation, agent or tenant.',
    type: 'string',
    enum: [...GRANT_LIMITS],
  },
  selfApproval: {
    description:
      "false: separation of duties. The conversation's user and the agent's owner (the agent token's owner claim) may not approve its held calls (403 self_approval, recorded); they may still reject them.",
    type: 'boolean',
  },
  seconds: {
    description: `Whole seconds, 1 to ${MAX_TIMEOUT_SECONDS} (30 days): a number, or a string with a unit ("90s", "2m", "1h", "7d").`,
    oneOf: [
      { type: 'integer', minimum: 1, maximum: MAX_TIMEOUT_SECONDS },
      { type: 'string', pattern: '^\\s*\\d{1,7}\\s*[smhd]\\s*$' },
    ],
  },
  decisionTimeout: {
    description:
      'How long a held call waits for a person before it expires, in seconds or as a duration ("7d"), up to 30 days: another way to write timeoutSeconds (give one of them; the document keeps timeoutSeconds). Long holds are rows with a deadline: they survive restarts and deploys.',
    $ref: '#/$defs/seconds',
  },
  redact: {
    description: `Argument paths whose values are secrets: a dotted path (headers.authorization, matched case-insensitively, each element of an array on the way) or a glob on a key name at any depth (*token*). Their values are shown and recorded masked ("[redacted:<digest>]") everywhere but the claim, which returns them. At most ${MAX_REDACT_PATHS} paths of ${MAX_REDACT_PATH_LENGTH} characters.`,
    type: 'array',
    minItems: 1,
    maxItems: MAX_REDACT_PATHS,
    uniqueItems: true,
    items: { type: 'string', minLength: 1, maxLength: MAX_REDACT_PATH_LENGTH, pattern: '^[^.]+(\\.[^.]+)*$' },
  },
  triggerWindow: {
    description: `The window looked back over, in seconds or as a duration ("1h", "1d"), up to ${MAX_TRIGGER_WINDOW_SECONDS / 86_400} days.`,
    oneOf: [
      { type: 'integer', minimum: 1, maximum: MAX_TRIGGER_WINDOW_SECONDS },
      { type: 'string', pattern: '^\\s*\\d{1,7}\\s*[smhd]\\s*$' },
    ],
  },
  triggerScope: {
    type: 'string',
    enum: [...TRIGGER_SCOPES],
    description:
      "Whose calls are counted: the proposing agent's, the conversation's, or the whole tenant's (of the tools the rule matches).",
  },
  escalate: {
    description: `While a held call waits: after each step's seconds (later steps later, each before the rule's timeoutSeconds), the approvers it lists may decide too and the channels it lists are told (slack: a reply in the request's thread; webhook and inbox: the ToolCallEscalated event; push and email: the people who may decide). At most ${MAX_ESCALATION_STEPS} steps.`,
    type: 'array',
    minItems: 1,
    maxItems: MAX_ESCALATION_STEPS,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['after'],
      properties: {
        after: { $ref: '#/$defs/seconds' },
        approvers: { $ref: '#/$defs/approvers' },
        notify: { type: 'array', minItems: 1, items: { type: 'string', enum: [...NOTIFY_CHANNELS] } },
      },
    },
  },
  remindBefore: {
    description: `Seconds before a held call expires at which the channels remind people of it, each once (again after an admin extends the deadline). At most ${MAX_ESCALATION_STEPS}.`,
    type: 'array',
    minItems: 1,
    maxItems: MAX_ESCALATION_STEPS,
    items: { $ref: '#/$defs/seconds' },
  },
  quorum: {
    description: `Distinct people who must approve a held call (confirm, manual) before it runs: a count, or {count, of: [roles or ${PERSON_PREFIX}<id or email>]} where only approvals by holders of those roles, or by the people named, count (a person named here may decide the call too). The first rejection rejects; a standing grant never stands in for a quorum. At most ${MAX_QUORUM}.`,
    oneOf: [
      { type: 'integer', minimum: 1, maximum: MAX_QUORUM },
      {
        type: 'object',
        additionalProperties: false,
        required: ['count'],
        properties: {
          count: { type: 'integer', minimum: 1, maximum: MAX_QUORUM },
          of: {
            type: 'array',
            minItems: 1,
            items: {
              anyOf: [
                { type: 'string', minLength: 1, pattern: `^(?!${PERSON_PREFIX})`, not: { enum: ['agent', 'auditor'] } },
                { $ref: '#/$defs/person' },
              ],
            },
          },
        },
      },
    ],
  },
  defaults: {
    description: 'Each field optional; left out, the built-in value.',
    type: 'object',
    additionalProperties: false,
    properties: {
      unknownTools: {
        $ref: '#/$defs/level',
        description: 'Level for a tool neither registered, annotated nor matched by a rule (built-in: confirm).',
      },
      timeoutSeconds: { $ref: '#/$defs/timeoutSeconds', description: 'Built-in: 300.' },
      decisionTimeout: { $ref: '#/$defs/decisionTimeout' },
      redact: { $ref: '#/$defs/redact' },
      approvers: { $ref: '#/$defs/approvers', description: 'Built-in: [approver, admin].' },
      trustAgentFlags: {
        type: 'boolean',
        description: 'false: flags from agents never make a call laxer than unknownTools (built-in: true).',
      },
      grants: { $ref: '#/$defs/grants', description: 'Built-in: tenant.' },
      selfApproval: {
        $ref: '#/$defs/selfApproval',
        description: 'Built-in: true (the requester may approve where approvers lists requester).',
      },
      shellTools: {
        description: `Globs on the names of tools whose string arguments are shell command lines: a rule naming such an argument (shell(cmd=rm *)) is matched against the whole command and each simple command it runs, and a command that cannot be parsed safely gets the strictest level of the rules on the tool. Built-in (and left out of the document when not given): ${DEFAULT_SHELL_TOOLS.join(', ')}. [] turns this off.`,
        type: 'array',
        maxItems: MAX_SHELL_TOOLS,
        items: {
          type: 'string',
          minLength: 1,
          maxLength: MAX_PATTERN_LENGTH,
          allOf: [{ pattern: String.raw`^[^()]*[^()\s][^()]*$` }, { pattern: MATCH_WILDCARDS }],
        },
      },
    },
  },
  when: {
    description: 'Every condition given must hold; a call without the field never matches.',
    type: 'object',
    additionalProperties: false,
    properties: {
      confidenceBelow: { type: 'number', minimum: 0, maximum: 1 },
      estimatedCostAbove: { type: 'number', minimum: 0 },
      rateAbove: {
        description:
          "Velocity: holds once more than `count` calls of the tools this rule matches were proposed within `per` by the scope `by`, this one included (the 21st of `count: 20`). The count is in the verdict's reason. Counted in the database under a lock per scope: correct across instances.",
        type: 'object',
        additionalProperties: false,
        required: ['count', 'per', 'by'],
        properties: {
          count: { type: 'integer', minimum: 0, maximum: MAX_TRIGGER_COUNT },
          per: { $ref: '#/$defs/triggerWindow' },
          by: { $ref: '#/$defs/triggerScope' },
        },
      },
      costAbove: {
        description:
          "Budget: holds once the estimatedCost of the calls of the tools this rule matches within `per` by the scope `by`, this call's included, sums above `total` (calls denied or rejected cost nothing). The total is in the verdict's reason.",
        type: 'object',
        additionalProperties: false,
        required: ['total', 'per', 'by'],
        properties: {
          total: { type: 'number', minimum: 0 },
          per: { $ref: '#/$defs/triggerWindow' },
          by: { $ref: '#/$defs/triggerScope' },
        },
      },
    },
  },
  rule: {
    type: 'object',
    additionalProperties: false,
    required: ['match', 'level'],
    allOf: [
      // `shell: true` needs a match that names an argument.
      {
        if: { required: ['shell'], properties: { shell: { const: true } } },
        then: { properties: { match: { type: 'string', pattern: String.raw`\(` } } },
      },
      // `allowChatApproval: true` cannot reach past the exclusions: confirm only, no separation of duties, no quorum.
      {
        if: { required: ['allowChatApproval'], properties: { allowChatApproval: { const: true } } },
        then: {
          properties: {
            level: { const: 'confirm' },
            selfApproval: { const: true },
            quorum: {
              anyOf: [{ const: 1 }, { type: 'object', properties: { count: { const: 1 }, of: false } }],
            },
          },
        },
      },
    ],
    properties: {
      match: {
        description: `A glob on the tool name (get_*), or Tool(name=glob, …) to match arguments too (shell(cmd=rm *)). * is any run of characters, ? one; case-sensitive and anchored. At most ${MAX_PATTERN_LENGTH} characters and ${MAX_PATTERN_WILDCARDS} wildcards; each argument named once.`,
        type: 'string',
        maxLength: MAX_PATTERN_LENGTH,
        allOf: [{ pattern: MATCH_SYNTAX }, { pattern: MATCH_WILDCARDS }],
      },
      level: { $ref: '#/$defs/level' },
      when: { $ref: '#/$defs/when' },
      requireRole: {
        type: 'string',
        minLength: 1,
        description: "A role the conversation's user must hold, else the call is denied.",
      },
      approvers: { $ref: '#/$defs/approvers' },
      timeoutSeconds: { $ref: '#/$defs/timeoutSeconds' },
      decisionTimeout: { $ref: '#/$defs/decisionTimeout' },
      grants: { $ref: '#/$defs/grants' },
      selfApproval: { $ref: '#/$defs/selfApproval' },
      quorum: { $ref: '#/$defs/quorum' },
      allowChatApproval: {
        type: 'boolean',
        description:
          'Whether an approval answered inside an MCP client (the chat form, recorded via mcp with assurance client: the client relayed it, no proof a person saw the call) may decide the calls this rule holds. Left out: yes for confirm calls of tools not flagged destructive, without selfApproval: false and without a quorum; no otherwise. false: never (403 chat_approval_not_allowed; the call waits in the inbox, and a rejection from the chat is still taken). true cannot override the exclusions: it is refused beside selfApproval: false, a quorum or a level other than confirm, and a destructive tool stays excluded.',
      },
      stepUp: {
        type: 'string',
        enum: ['passkey'],
        description:
          'passkey: a person approves the calls this rule holds (confirm, manual) only with a fresh passkey assertion, user verification required, whose challenge is derived from the call id and the digest of the exact arguments approved (edited ones included). Without one the approval gets 403 step_up_required; one made for another call or other arguments, 403 step_up_mismatch. No standing grant covers these calls, no chat client approves them, and Slack, the CLI and chat link to the card in the inbox, where the passkey signs. A rejection needs no passkey.',
      },
      requireVerifiedUser: {
        type: 'boolean',
        description:
          "true: the calls this rule matches are denied unless the conversation's end user was verified by Tollgate from their own identity provider token (user.token when the conversation started), not merely asserted by the agent.",
      },
      escalate: { $ref: '#/$defs/escalate' },
      remindBefore: { $ref: '#/$defs/remindBefore' },
      notify: {
        description:
          'The channels that reach out to people about the calls this rule holds (confirm, manual) or tells of (notify): push, email, slack (webhook and inbox name the FYI of a notify call). Left out: all the channels configured (a notify call: slack, webhook, inbox). The inbox lists held calls, and webhooks receive what they subscribed to, whatever this says; an escalation step names its own.',
        type: 'array',
        minItems: 1,
        items: { type: 'string', enum: [...NOTIFY_CHANNELS] },
      },
      shell: {
        type: 'boolean',
        description:
          "true: the string arguments this rule's match names are shell command lines, matched against the whole command and each simple command in it, whatever defaults.shellTools says. false: matched as written. Left out: shell when the tool is one of defaults.shellTools.",
      },
      redact: {
        $ref: '#/$defs/redact',
        description:
          "More argument paths whose values are secrets, in the calls of the tools this rule matches (whatever its level and arguments), besides defaults.redact and the tool's own.",
      },
      allowedDecisions: {
        description:
          'What a person may decide on the calls this rule holds (confirm, manual): approve, edit (approve with changed arguments), reject, always_allow (approve and make a standing grant), respond (answer the agent instead of running the tool). Left out: all of them. Another decision answers 403 decision_not_allowed; channels show only these.',
        type: 'array',
        minItems: 1,
        uniqueItems: true,
        items: { type: 'string', enum: [...RULE_DECISIONS] },
      },
      rejectReasons: {
        description: `The reasons a rejection may give, shown as choices (confirm, manual); another reason answers 403 decision_not_allowed unless rejectFreeText. At most ${MAX_REJECT_REASONS} of ${MAX_REJECT_REASON_LENGTH} characters.`,
        type: 'array',
        minItems: 1,
        maxItems: MAX_REJECT_REASONS,
        uniqueItems: true,
        items: { type: 'string', minLength: 1, maxLength: MAX_REJECT_REASON_LENGTH },
      },
      rejectFreeText: {
        type: 'boolean',
        description: 'With rejectReasons: true lets a person write their own reason instead of choosing one.',
      },
      mode: {
        type: 'string',
        enum: ['enforce', 'shadow'],
        description:
          "shadow: the rule never decides; it is evaluated on live traffic and what it would have decided, when it would have decided the call, is recorded (the call's policy.shadow, the ToolCallProposed event's shadow). enforce (left out): the rule decides.",
      },
      reason: {
        type: 'string',
        minLength: 1,
        description: "Recorded as the policy's reason instead of the one the server would give.",
      },
    },
  },
  governance: {
    description:
      "Changes to the control plane need this many distinct admins (the one who asks counts): policy changes and rollbacks, tenant-wide grants, resuming after a halt and new webhooks wait as pending changes (/v1/changes) until others approve. The current policy's governance governs a change, so turning it off is itself a governed change. Left out: one admin.",
    type: 'object',
    additionalProperties: false,
    required: ['quorum'],
    properties: { quorum: { type: 'integer', minimum: 1, maximum: MAX_QUORUM } },
  },
};

const EXAMPLE = {
  defaults: { unknownTools: 'confirm', timeoutSeconds: 300, approvers: ['approver', 'admin'] },
  rules: [
    { match: 'get_*', level: 'automatic' },
    { match: 'shell(cmd=rm *)', level: 'deny' },
    {
      match: 'delete_source',
      level: 'confirm',
      requireRole: 'admin',
      approvers: ['requester', 'admin'],
      timeoutSeconds: 600,
    },
    { match: 'wire_money', level: 'confirm', selfApproval: false, quorum: { count: 2, of: ['admin'] } },
    { match: '*', when: { confidenceBelow: 0.6 }, level: 'confirm', reason: 'Low confidence' },
  ],
};

const document: Schema = {
  title: 'Tollgate policy document',
  description:
    "A tenant's policy: defaults, and rules matched against each proposed tool call (docs/API.md#policy). Put it with PUT /v1/policy, as JSON or YAML.",
  type: 'object',
  additionalProperties: false,
  properties: {
    defaults: { $ref: '#/$defs/defaults' },
    governance: { $ref: '#/$defs/governance' },
    rules: {
      type: 'array',
      maxItems: MAX_RULES,
      items: { $ref: '#/$defs/rule' },
      description: 'Matched in order; among the rules that match, the strictest level decides (the earlier on a tie).',
    },
  },
};

/** The standalone JSON Schema, as served at /schemas/policy.json. */
export const POLICY_JSON_SCHEMA: Schema = deepFreeze({
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  ...document,
  examples: [EXAMPLE],
  $defs: defs,
});

/** Component names in the OpenAPI document: `Policy` + the definition's name. */
const componentName = (def: string) => `Policy${def[0].toUpperCase()}${def.slice(1)}`;
export const POLICY_DOCUMENT_COMPONENT = 'PolicyDocument';

/**
 * The same schema as components of the OpenAPI 3.1 document (whose schemas are JSON Schema 2020-12 too): the
 * `$defs` become `Policy…` components and the document itself `PolicyDocument`; only the references change.
 * Also `PolicyDefaultsInForce`: the defaults as GET /v1/policy answers them, every field filled in.
 */
export function policyOpenApiComponents(): Record<string, Schema> {
  const rename = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(rename);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [
        k,
        k === '$ref' && typeof x === 'string'
          ? `#/components/schemas/${componentName(x.replace('#/$defs/', ''))}`
          : rename(x),
      ]),
    );
  };
  const out: Record<string, Schema> = {};
  for (const [name, def] of Object.entries(defs)) out[componentName(name)] = rename(def) as Schema;
  out[POLICY_DOCUMENT_COMPONENT] = { ...(rename(document) as Schema), examples: [EXAMPLE] };
  const filled = out[componentName('defaults')];
  // shellTools and redact stay optional: left out, the built-in list applies (none to redact) and the document does
  // not spell it out. decisionTimeout is only ever read: the defaults in force say timeoutSeconds.
  const { decisionTimeout: _written, ...inForce } = filled.properties as Record<string, Schema>;
  const required = Object.keys(inForce).filter((name) => name !== 'shellTools' && name !== 'redact');
  out.PolicyDefaultsInForce = {
    ...filled,
    properties: inForce,
    description:
      'The defaults in force, every field filled in but shellTools (absent: the built-in list) and redact (absent: none).',
    required,
  };
  return out;
}

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object') {
    Object.values(v).forEach(deepFreeze);
    Object.freeze(v);
  }
  return v;
}
