/**
 * The shapes of Tollgate's REST API (docs/API.md), written once: the CLI, the web inbox and agents all read
 * them from here. Each type carries the name of the OpenAPI schema it mirrors (`components.schemas.<Name>` of
 * GET /openapi.json), and a test compiles them against types generated from the server's document, so a
 * member added, dropped or changed on either side fails `npm test`.
 */

/** Any JSON value. */
export type JsonValue = unknown;

/** A JSON object: tool arguments, metadata, edited arguments. */
export type JsonObject = { [key: string]: unknown };

/* ── enumerations ─────────────────────────────────────────────────────────────────────────────────────── */

/** Where a decision came from: `policy` for the policy's own, `system` for expiry and the like. */
export type Channel = 'policy' | 'web' | 'cli' | 'slack' | 'api' | 'grpc' | 'mcp' | 'system';
export type DecisionOutcome = 'approved' | 'rejected' | 'expired' | 'cancelled';
export type ToolCallStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'cancelled' | 'executed' | 'completed';
/** How closely a person supervises a call, strictest first. */
export type SupervisionLevel = 'deny' | 'manual' | 'confirm' | 'notify' | 'automatic';
export type PolicyLevel = SupervisionLevel;
export type GrantScope = 'conversation' | 'agent' | 'tenant';
export type GrantLimit = 'none' | GrantScope;
export type PolicyGrants = GrantLimit;
export type HaltScope = 'tenant' | 'agent' | 'conversation';
export type ConversationStatus = 'active' | 'blocked' | 'halted';
export type ActorKind = 'person' | 'agent' | 'system';
export type EventType =
  | 'ConversationStarted'
  | 'ToolRegistered'
  | 'PolicyUpdated'
  | 'ToolCallProposed'
  | 'ToolCallAutoApproved'
  | 'ToolCallNotified'
  | 'ApprovalRequested'
  | 'ToolCallApproved'
  | 'ToolCallApprovalRecorded'
  | 'DecisionRefused'
  | 'ToolCallEscalated'
  | 'ToolCallReminded'
  | 'ToolCallDeadlineExtended'
  | 'ToolCallRejected'
  | 'ToolCallExpired'
  | 'ToolCallCancelled'
  | 'ToolCallExecuted'
  | 'ToolCallCompleted'
  | 'GrantCreated'
  | 'GrantRefused'
  | 'GrantRevoked'
  | 'Halted'
  | 'Resumed'
  | 'AuditPurged'
  | 'WebhookCreated'
  | 'WebhookDeleted'
  | 'QuestionAsked'
  | 'QuestionAnswered'
  | 'QuestionExpired'
  | 'QuestionCancelled';

/* ── errors ───────────────────────────────────────────────────────────────────────────────────────────── */

export interface ValidationFault {
  /** A body path (`toolCalls[0].toolName`), a query parameter or a header name; empty for the whole body. */
  path: string;
  message: string;
}

/** RFC 9457 problem details, as every error of the API. `code` is stable; `detail` is for people. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  /** validation_failed: one entry per fault. */
  errors?: ValidationFault[];
  /** conversation_blocked: the calls still waiting for a person. */
  pendingToolCallIds?: string[];
  /** already_decided: the standing decision. */
  decision?: ToolCallDecision;
  /** already_decided, not_approved, already_executed, not_executed: the status of the call now. */
  toolCallStatus?: ToolCallStatus;
  /** forbidden (a standing grant): the scope asked for. */
  requestedScope?: GrantScope;
  /** forbidden (a standing grant): the widest scope the caller and the policy allow. */
  allowedScope?: GrantLimit;
  /** halted: the scope of the halt in force; too_many_open_questions: which limit, `conversation` or `agent`. */
  scope?: HaltScope;
  /** too_many_open_questions: the limit reached. */
  limit?: number;
  /** already_answered: the status of the question now. */
  questionStatus?: 'pending' | 'answered' | 'expired' | 'cancelled';
  /** rate_limited, unavailable: seconds to wait (also the Retry-After header). */
  retryAfter?: number;
}

/* ── tool calls ───────────────────────────────────────────────────────────────────────────────────────── */

/** Who did something, and through which channel. */
export interface ActorRef {
  /** A person's or agent's `sub`, or `policy` / `system`. */
  id: string;
  name?: string;
  via: Channel;
}

export interface ToolCallDecision {
  outcome: DecisionOutcome;
  by: ActorRef;
  at: string;
  reason?: string;
  /** The arguments an approver ran instead of the proposed ones. */
  editedArguments?: JsonObject;
}

export interface DisplayField {
  label: string;
  value: string;
}

/** What people are shown of a proposed call. */
export interface Display {
  title?: string;
  summary?: string;
  fields?: DisplayField[];
}

export interface ToolFlags {
  isReadOnly?: boolean;
  requiresApproval?: boolean;
  destructive?: boolean;
}

/** Why the policy judged the call as it did. */
export interface ToolCallPolicy {
  level: SupervisionLevel;
  /** Index of the deciding rule; null when no rule decided. */
  rule: number | null;
  policyVersion: number;
  reason: string;
  /** The flags the policy saw, when the tool had any. */
  toolFlags?: ToolFlags;
}

/** Who may decide a held call, and until when. */
export interface QuorumApprover {
  id: string;
  name?: string;
  via: string;
  at: string;
}

/** A call that needs several distinct approvals: "1 of 2" is `approvedBy.length` of `needed`. */
export interface ToolCallQuorum {
  needed: number;
  /** Only approvals by people holding one of these roles count. */
  of?: string[];
  approvedBy: QuorumApprover[];
}

export interface ToolCallApproval {
  approvers: string[];
  expiresAt: string;
  /** False: the conversation's user and the agent's owner may not approve this call (separation of duties). */
  selfApproval?: false;
  quorum?: ToolCallQuorum;
}

export interface ToolCallExecution {
  at: string;
  by: ActorRef;
}

export interface ToolCallResult {
  outcome: 'succeeded' | 'failed';
  output?: JsonValue;
  error?: string;
  at: string;
}

export interface ToolCallCancellation {
  by: ActorRef;
  at: string;
  reason: string;
}

/** A proposed tool call; members appear once they apply. */
export interface ToolCall {
  /** The server's id (`tc_…`), unique across conversations. */
  id: string;
  /** The framework's own tool-call id, as proposed. */
  externalId?: string;
  conversationId: string;
  toolName: string;
  /** As proposed (an edit is in `decision.editedArguments`). */
  arguments: JsonObject;
  reason?: string;
  confidence?: number;
  estimatedCost?: number;
  display?: Display;
  status: ToolCallStatus;
  policy: ToolCallPolicy;
  /** On calls held for a person. */
  approval?: ToolCallApproval;
  /** Once decided, by a person or the policy. */
  decision?: ToolCallDecision;
  execution?: ToolCallExecution;
  result?: ToolCallResult;
  cancellation?: ToolCallCancellation;
  createdAt: string;
  updatedAt: string;
}

/** A proposal's flags, in Tollgate's names or an MCP tool's annotations as they are (the two names of one flag must agree). */
export interface ToolAnnotations {
  isReadOnly?: boolean;
  requiresApproval?: boolean;
  destructive?: boolean;
  /** MCP's name for `isReadOnly`. */
  readOnlyHint?: boolean;
  /** MCP's name for `destructive`. */
  destructiveHint?: boolean;
  /** Accepted from MCP; not read by the policy. */
  idempotentHint?: boolean;
  /** Accepted from MCP; not read by the policy. */
  openWorldHint?: boolean;
  /** Accepted from MCP; not read by the policy. */
  title?: string;
}

/** One call of a proposal (POST /v1/conversations/{id}/tool-calls). */
export interface ProposedToolCall {
  /** The framework's tool-call id (`^[A-Za-z0-9_.:-]{1,128}$`); makes the proposal idempotent. */
  id?: string;
  toolName: string;
  arguments: JsonObject;
  /** The tool's flags, counted only for a tool that is not registered. */
  annotations?: ToolAnnotations;
  /** Why the agent wants it, shown to people. */
  reason?: string;
  confidence?: number;
  estimatedCost?: number;
  display?: Display;
}

export interface ProposeToolCallsRequest {
  toolCalls: ProposedToolCall[];
}

/** A step's calls, each already approved, rejected or pending. */
export interface Proposal {
  /** Without its call history. */
  conversation: Conversation;
  toolCalls: ToolCall[];
}

export interface DecisionRequest {
  decision: 'approve' | 'reject' | 'always_allow';
  /** A rejection's reason is what the agent reads. */
  reason?: string;
  /** approve only: the arguments to run instead. */
  arguments?: JsonObject;
  /** always_allow only: where the standing grant applies (default conversation). */
  scope?: GrantScope;
  /** always_allow only: seconds the standing grant lives (1 to 7,776,000, i.e. 90 days); without it, until revoked. */
  expiresIn?: number;
  /** always_allow only: argument name → glob (as in a policy rule's `tool(arg=glob)`); the grant covers only calls whose arguments all match. */
  args?: { [name: string]: string };
}

/** The answer to a claim: the call (now executed), the arguments to run, and the receipt vouching for them. */
export interface ExecutionClaim {
  toolCall: ToolCall;
  /** The edited ones when an approver edited them. */
  arguments: JsonObject;
  /** A compact JWS (EdDSA) for the tool's backend: see `verifyReceipt`. */
  receipt: string;
}

export interface ResultRequest {
  outcome: 'succeeded' | 'failed';
  /** Any JSON, at most 64 KiB serialised. */
  output?: JsonValue;
  error?: string;
}

/* ── conversations and the inbox ──────────────────────────────────────────────────────────────────────── */

/** The conversation's end user, as the agent named them. */
export interface ConversationUser {
  id: string;
  roles: string[];
  name?: string;
}

export interface ConversationUserInput {
  id: string;
  roles?: string[];
  name?: string;
}

export interface StartConversationRequest {
  /** Made by the server when left out; the same id again from the same agent answers the conversation as it is. */
  id?: string;
  user?: ConversationUserInput;
  title?: string;
  metadata?: JsonObject;
}

export interface Conversation {
  id: string;
  /** The `sub` of the agent that started it. */
  agentId: string;
  user: ConversationUser | null;
  title: string | null;
  metadata: JsonObject;
  /** blocked: a call waits for a person; halted: a halt covers it. */
  status: ConversationStatus;
  pendingCount: number;
  /** Every call, oldest first; left out of lists and of a proposal's answer. */
  toolCalls?: ToolCall[];
  createdAt: string;
  updatedAt: string;
}

export interface ApprovalConversation {
  id: string;
  agentId: string;
  user: ConversationUser | null;
  title: string | null;
}

/** An inbox entry: the call and enough of its conversation to judge it. */
export interface Approval extends ToolCall {
  conversation: ApprovalConversation;
}

/** A page of a list; pass `nextCursor` as `cursor` for the next one (null on the last). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export type ConversationPage = Page<Conversation>;
export type ApprovalPage = Page<Approval>;
export type ToolPage = Page<Tool>;

/* ── standing grants ──────────────────────────────────────────────────────────────────────────────────── */

export type GrantStatus = 'active' | 'revoked' | 'expired';

/** Who made or revoked a grant, and through which channel. */
export interface GrantActor {
  id: string;
  name?: string;
  via: Channel;
}

/** A standing grant: an always_allow that turns `confirm` into `automatic` for its tool in its scope. */
export interface Grant {
  id: string;
  toolName: string;
  scope: GrantScope;
  /** scope conversation only. */
  conversationId: string | null;
  /** scope agent only. */
  agentId: string | null;
  /** Argument name → glob; null: any arguments. */
  args: { [name: string]: string } | null;
  /** What the grant covers, written as a policy pattern: `shell(cmd=ls *)`, or the tool name alone. */
  pattern: string;
  status: GrantStatus;
  createdBy: GrantActor;
  createdAt: string;
  /** After this the grant no longer applies; null: until revoked. */
  expiresAt: string | null;
  revokedAt: string | null;
  revokedBy: GrantActor | null;
  revokeReason: string | null;
  /** The tool call whose always_allow made the grant. */
  sourceToolCallId: string;
}

export type GrantPage = Page<Grant>;

export interface RevokeGrantRequest {
  /** Why; recorded in the audit trail (GrantRevoked). */
  reason?: string;
}

/* ── tools, policy, halts ─────────────────────────────────────────────────────────────────────────────── */

export interface ToolRegistrant {
  id: string;
  /** An agent cannot change a tool an admin registered. */
  kind: 'admin' | 'agent';
}

export interface Tool {
  name: string;
  description: string | null;
  isReadOnly: boolean;
  requiresApproval: boolean;
  destructive: boolean;
  registeredBy: ToolRegistrant;
  createdAt: string;
  updatedAt: string;
}

export interface RegisterToolRequest {
  description?: string;
  isReadOnly?: boolean;
  requiresApproval?: boolean;
  destructive?: boolean;
}

export type PolicyApprovers = Array<'approver' | 'admin' | 'requester'>;

/** Seconds a held call waits for a person before it expires: 1 to 86,400. */
export type PolicyTimeoutSeconds = number;

/** false: the conversation's end user and the agent's owner may not approve (separation of duties). */
export type PolicySelfApproval = boolean;

/** Distinct people who must approve a held call: a count, or `{count, of: [roles]}`. */
export type PolicyQuorum = number | { count: number; of?: string[] };

/** Whole seconds: a number, or a string with a unit (`"90s"`, `"2m"`, `"1h"`). */
export type PolicySeconds = number | string;

/** Escalation steps of a held call: after `after`, `approvers` may decide too and `notify` channels are told. */
export type PolicyEscalate = Array<{
  after: PolicySeconds;
  approvers?: PolicyApprovers;
  notify?: Array<'slack' | 'webhook' | 'inbox'>;
}>;

/** Times before the deadline at which people are reminded. */
export type PolicyRemindBefore = PolicySeconds[];

export interface PolicyWhen {
  confidenceBelow?: number;
  estimatedCostAbove?: number;
}

export interface PolicyRule {
  /** A glob on the tool name (`get_*`), or `Tool(name=glob, …)` to match arguments too. */
  match: string;
  level: PolicyLevel;
  when?: PolicyWhen;
  requireRole?: string;
  approvers?: PolicyApprovers;
  timeoutSeconds?: PolicyTimeoutSeconds;
  grants?: PolicyGrants;
  selfApproval?: PolicySelfApproval;
  quorum?: PolicyQuorum;
  escalate?: PolicyEscalate;
  remindBefore?: PolicyRemindBefore;
  /** The string arguments this rule names are shell command lines (true), or matched as written (false). */
  shell?: boolean;
  reason?: string;
}

export interface PolicyDefaults {
  unknownTools?: PolicyLevel;
  timeoutSeconds?: PolicyTimeoutSeconds;
  approvers?: PolicyApprovers;
  trustAgentFlags?: boolean;
  grants?: PolicyGrants;
  selfApproval?: PolicySelfApproval;
  /** Globs on the names of tools whose string arguments are shell command lines (left out: the built-in list). */
  shellTools?: string[];
}

export type PolicyDefaultsInForce = Required<Omit<PolicyDefaults, 'shellTools'>> & Pick<PolicyDefaults, 'shellTools'>;

/** A policy document, as PUT /v1/policy takes it (JSON Schema: /schemas/policy.json). */
export interface PolicyDocument {
  defaults?: PolicyDefaults;
  rules?: PolicyRule[];
}

/** The tenant's policy in force. */
export interface Policy {
  /** 0: no policy yet, the built-in defaults. */
  version: number;
  defaults: PolicyDefaultsInForce;
  rules: PolicyRule[];
  updatedAt: string | null;
  updatedBy: string | null;
}

export interface HaltRequest {
  scope: HaltScope;
  /** The agent's sub or the conversation id; left out for the tenant. */
  id?: string;
  reason: string;
}

export interface HaltResult {
  scope: HaltScope;
  id: string | null;
  reason: string;
  by: ActorRef;
  at: string;
  halted: true;
  /** false: it was halted already, and nothing changed. */
  changed: boolean;
  cancelledToolCallIds: string[];
}

export interface ResumeRequest {
  scope: HaltScope;
  id?: string;
  reason?: string;
}

export interface ResumeResult {
  scope: HaltScope;
  id: string | null;
  halted: false;
  changed: boolean;
}

/** A halt in force. */
export interface Halt {
  scope: HaltScope;
  id: string | null;
  reason: string;
  by: ActorRef;
  at: string;
}

/** An agent token is an agent whatever else it claims. */
export type PrincipalKind = 'person' | 'agent';

/** Who the caller is, as their token establishes them (`GET /v1/me`). */
export interface Me {
  /** The token's `sub`. */
  id: string;
  /** Every other answer is confined to this tenant. */
  tenant: string;
  kind: PrincipalKind;
  name: string | null;
  /** The token's `email` claim, when it carries a well-formed one. */
  email: string | null;
  /** The roles as they count here: `["agent"]` for an agent token. */
  roles: string[];
  /** An agent's owner (its token's `owner` claim); null for people. */
  owner: string | null;
}

/** The halts in force in the tenant; `halted` means the whole tenant. */
export interface Status {
  tenant: string;
  halted: boolean;
  halts: Halt[];
}

/* ── audit and live events ────────────────────────────────────────────────────────────────────────────── */

/** Who acted, as the audit trail records them. */
export interface Actor {
  id: string;
  kind: ActorKind;
  via: Channel;
  name?: string;
  roles?: string[];
}

/** An audit event, as stored, listed and streamed: `hash = sha256hex(prevHash + JCS(event without hash))`. */
export interface AuditEvent {
  seq: number;
  id: string;
  type: EventType;
  at: string;
  recordedAt: string;
  tenant: string;
  instanceId: string;
  correlationId?: string;
  conversationId?: string;
  toolCallId?: string;
  toolName?: string;
  actor: Actor;
  /** The event's own data, by type (docs/API.md#audit). */
  data: JsonObject;
  prevHash: string;
  hash: string;
}

export interface AuditEventPage {
  events: AuditEvent[];
  nextCursor: string | null;
}

/** The chain's head, signed with the receipt key. */
export interface AuditCheckpoint {
  /** Compact JWS (typ tollgate-checkpoint+jwt) over {tenant, seq, hash, at}. */
  jws: string;
  tenant: string;
  seq: number;
  hash: string;
  at: string;
}

export interface VerifiedCheckpoint {
  tenant: string;
  seq: number;
  hash: string;
  at: string;
  kid: string;
  purged?: true;
}

export interface VerifyResult {
  ok: boolean;
  checked: number;
  firstBadSeq?: number;
  problem?: string;
  checkpoint?: VerifiedCheckpoint;
}

/** An Ed25519 public key (RFC 8037) of /.well-known/jwks.json. */
export interface Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

export interface Jwks {
  keys: Jwk[];
}
