/**
 * The shapes of Tollgate's REST API (docs/API.md), by name: each is the OpenAPI schema of the same name
 * (`components.schemas.<Name>` of GET /openapi.json), generated into ./generated/api.ts by scripts/gen-types.mjs.
 * Nothing here restates a schema; what the API does not describe (a generic page, a JSON object) is written here.
 * `npm test` fails while the generated file differs from the server's document (test/openapi-types.e2e-spec.ts).
 */
import type { components } from './generated/api.js';

type S = components['schemas'];

/** Any JSON value. */
export type JsonValue = S['JsonValue'];

/** A JSON object: tool arguments, metadata, edited arguments. */
export type JsonObject = { [key: string]: unknown };

/** A page of a list; pass `nextCursor` as `cursor` for the next one (null on the last). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/* ── enumerations ─────────────────────────────────────────────────────────────────────────────────────── */

/** Where a decision came from: `policy` for the policy's own, `system` for expiry and the like. */
export type Channel = S['Channel'];
export type DecisionOutcome = S['DecisionOutcome'];
export type ToolCallStatus = S['ToolCallStatus'];
/** How closely a person supervises a call, strictest first. */
export type SupervisionLevel = S['SupervisionLevel'];
export type PolicyLevel = S['PolicyLevel'];
export type GrantScope = S['GrantScope'];
export type GrantLimit = S['GrantLimit'];
export type PolicyGrants = S['PolicyGrants'];
export type HaltScope = S['HaltScope'];
export type ConversationStatus = S['ConversationStatus'];
export type ActorKind = S['ActorKind'];
export type EventType = S['EventType'];

/* ── errors ───────────────────────────────────────────────────────────────────────────────────────────── */

export type ValidationFault = S['ValidationFault'];
/** RFC 9457 problem details, as every error of the API. `code` is stable; `detail` is for people. */
export type Problem = S['Problem'];

/* ── tool calls ───────────────────────────────────────────────────────────────────────────────────────── */

/** Who did something, and through which channel. */
export type ActorRef = S['ActorRef'];
export type ToolCallDecision = S['ToolCallDecision'];
export type DisplayField = S['DisplayField'];
/** What people are shown of a proposed call. */
export type Display = S['Display'];
/** What a call will do, as a person should see it (diff, sql, email, text, image): a proposal's `preview`. */
export type PreviewInput = S['PreviewInput'];
export type PreviewKind = S['PreviewKind'];
export type PreviewEmail = S['PreviewEmail'];
/** A call's preview as proposed, with its digest: the decision's and the receipt's `preview`. */
export type Preview = S['Preview'];
export type ToolFlags = S['ToolFlags'];
/** Why the policy judged the call as it did. */
export type ToolCallPolicy = S['ToolCallPolicy'];
export type QuorumApprover = S['QuorumApprover'];
/** A call that needs several distinct approvals: "1 of 2" is `approvedBy.length` of `needed`. */
export type ToolCallQuorum = S['ToolCallQuorum'];
/** Who may decide a held call, and until when. */
export type ToolCallApproval = S['ToolCallApproval'];
export type ToolCallExecution = S['ToolCallExecution'];
export type ToolCallResult = S['ToolCallResult'];
export type ToolCallCancellation = S['ToolCallCancellation'];
/** A proposed tool call; members appear once they apply. */
export type ToolCall = S['ToolCall'];
/** A proposal's flags, in Tollgate's names or an MCP tool's annotations as they are. */
export type ToolAnnotations = S['ToolAnnotations'];
/** One call of a proposal (POST /v1/conversations/{id}/tool-calls). */
export type ProposedToolCall = S['ProposedToolCall'];
export type ProposeToolCallsRequest = S['ProposeToolCallsRequest'];
/** A step's calls, each already approved, rejected or pending. */
export type Proposal = S['Proposal'];
export type DecisionRequest = S['DecisionRequest'];
/** One decision for every pending call of a step (POST /v1/conversations/{id}/decisions). */
export type StepDecisionRequest = S['StepDecisionRequest'];
/** What a step decision did: the calls decided (as they now stand) and those left as they were, with why. */
export type StepDecision = S['StepDecision'];
export type StepDecisionRefusal = S['StepDecisionRefusal'];
/** The answer to a claim: the call (now executed), the arguments to run, and the receipt vouching for them. */
export type ExecutionClaim = S['ExecutionClaim'];
export type ResultRequest = S['ResultRequest'];
/** More time for a pending call: `extendBy` seconds or a new `expiresAt`. */
export type DeadlineRequest = S['DeadlineRequest'];

/** A proof of presence on a decision (`decision.stepUp`): the passkey that signed the approval. */
export type StepUp = S['StepUp'];
export type StepUpMethod = S['StepUpMethod'];
/** A decision's `stepUp`: `{ passkey: <AuthenticationResponseJSON> }`, as the browser's startAuthentication gave it. */
export type StepUpEvidence = S['StepUpEvidence'];
/**
 * What a browser's WebAuthn ceremony gave (@simplewebauthn/browser's RegistrationResponseJSON or
 * AuthenticationResponseJSON), sent as it is. Any object: those libraries' interfaces have no index signature.
 */
export type WebAuthnResponseJSON = object;
/** The body of POST /v1/tool-calls/{id}/step-up: the edited arguments the approval will carry, if any. */
export type StepUpRequest = S['StepUpRequest'];
/** A challenge bound to the call and the arguments approved: `publicKey` is the options for startAuthentication. */
export type StepUpOptions = S['StepUpOptions'];

/* ── conversations and the inbox ──────────────────────────────────────────────────────────────────────── */

/**
 * The conversation's end user. `assurance`: `verified` when Tollgate verified the user's own identity provider token
 * (`user.token`) and took the id, roles and name from it; `asserted` when the agent named them.
 */
export type ConversationUser = S['ConversationUser'];
/**
 * The end user a conversation starts for: `{ id, roles?, name? }` as the agent names them (asserted), or
 * `{ token }` (with `id` only if it is the token's `sub`): the user's own token from the identity provider, issued to
 * the agent's application and never one Tollgate takes as a bearer token. Tollgate verifies it and records the user
 * as verified, which rules with `requireVerifiedUser` insist on.
 */
export type ConversationUserInput = S['ConversationUserInput'];
export type StartConversationRequest = S['StartConversationRequest'];
export type Conversation = S['Conversation'];
export type ApprovalConversation = S['ApprovalConversation'];
/** An inbox entry: the call and enough of its conversation to judge it. */
export type Approval = S['Approval'];
export type ConversationPage = S['ConversationPage'];
export type ApprovalPage = S['ApprovalPage'];
export type ToolPage = S['ToolPage'];

/* ── questions ────────────────────────────────────────────────────────────────────────────────────────── */

/** A question as the server answers it. */
export type Question = S['Question'];
export type QuestionPage = S['QuestionPage'];
export type QuestionStatus = S['QuestionStatus'];
/** Who may answer: the conversation's end user (`requester`), approvers, admins. */
export type QuestionAudience = S['Question']['askTo'][number];
/** The body of `askQuestion`. */
export type AskQuestionRequest = S['AskQuestionRequest'];
export type AnswerQuestionRequest = S['AnswerQuestionRequest'];

/* ── standing grants ──────────────────────────────────────────────────────────────────────────────────── */

export type GrantStatus = S['Grant']['status'];
/** Who made or revoked a grant, and through which channel. */
export type GrantActor = S['GrantActor'];
/** A standing grant: an always_allow that turns `confirm` into `automatic` for its tool in its scope. */
export type Grant = S['Grant'];
export type GrantPage = S['GrantPage'];
export type RevokeGrantRequest = S['RevokeGrantRequest'];

/* ── tools, policy, halts ─────────────────────────────────────────────────────────────────────────────── */

export type ToolRegistrant = S['ToolRegistrant'];
export type Tool = S['Tool'];
export type RegisterToolRequest = S['RegisterToolRequest'];
export type PolicyApprovers = S['PolicyApprovers'];
/** Seconds a held call waits for a person before it expires: 1 to 86,400. */
export type PolicyTimeoutSeconds = S['PolicyTimeoutSeconds'];
/** false: the conversation's end user and the agent's owner may not approve (separation of duties). */
export type PolicySelfApproval = S['PolicySelfApproval'];
/** Distinct people who must approve a held call: a count, or `{count, of: [roles]}`. */
export type PolicyQuorum = S['PolicyQuorum'];
/** Whole seconds: a number, or a string with a unit (`"90s"`, `"2m"`, `"1h"`). */
export type PolicySeconds = S['PolicySeconds'];
/** Escalation steps of a held call: after `after`, `approvers` may decide too and `notify` channels are told. */
export type PolicyEscalate = S['PolicyEscalate'];
/** Times before the deadline at which people are reminded. */
export type PolicyRemindBefore = S['PolicyRemindBefore'];
export type PolicyWhen = S['PolicyWhen'];
export type PolicyRule = S['PolicyRule'];
export type PolicyDefaults = S['PolicyDefaults'];
export type PolicyDefaultsInForce = S['PolicyDefaultsInForce'];
/** A policy document, as PUT /v1/policy takes it (JSON Schema: /schemas/policy.json). */
export type PolicyDocument = S['PolicyDocument'];
/** The tenant's policy in force. */
export type Policy = S['Policy'];
export type HaltRequest = S['HaltRequest'];
export type HaltResult = S['HaltResult'];
export type ResumeRequest = S['ResumeRequest'];
export type ResumeResult = S['ResumeResult'];
/** A halt in force. */
export type Halt = S['Halt'];
/** An agent token is an agent whatever else it claims. */
export type PrincipalKind = S['PrincipalKind'];
/** Who the caller is, as their token establishes them (`GET /v1/me`). */
export type Me = S['Me'];
/** The halts in force in the tenant; `halted` means the whole tenant. */
export type Status = S['Status'];

/* ── passkeys ─────────────────────────────────────────────────────────────────────────────────────────── */

/** One of the person's passkeys (never its key). */
export type Passkey = S['Passkey'];
export type PasskeyList = S['PasskeyList'];
/** Options for startRegistration, and, when the person holds passkeys, for the assertion adding another needs. */
export type PasskeyRegistrationOptions = S['PasskeyRegistrationOptions'];
/** Options for startAuthentication with one of the person's passkeys. */
export type PasskeyAssertionOptions = S['PasskeyAssertionOptions'];
export type RegisterPasskeyRequest = S['RegisterPasskeyRequest'];
export type RemovePasskeyRequest = S['RemovePasskeyRequest'];
/** The change an assertion will authorise: `remove` (default) one of your passkeys, `revoke` an admin's removal. */
export type AssertionOptionsRequest = S['AssertionOptionsRequest'];

/* ── audit and keys ───────────────────────────────────────────────────────────────────────────────────── */

/** Who acted, as the audit trail records them. */
export type Actor = S['Actor'];
/** An audit event, as stored, listed and streamed: `hash = sha256hex(prevHash + JCS(event without hash))`. */
export type AuditEvent = S['AuditEvent'];
export type AuditEventPage = S['AuditEventPage'];
/** The chain's head, signed with the receipt key. */
export type AuditCheckpoint = S['AuditCheckpoint'];
export type VerifiedCheckpoint = S['VerifiedCheckpoint'];
export type VerifyResult = S['VerifyResult'];
/** Per person who decided held calls in a window: approve rate, time to decide, HITL-03 (issue 28). */
export type AuditReviewers = S['AuditReviewers'];
export type ReviewerStats = S['ReviewerStats'];
/** An Ed25519 public key (RFC 8037) of /.well-known/jwks.json. */
export type Jwk = S['Jwk'];
export type Jwks = S['Jwks'];
