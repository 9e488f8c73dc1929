import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { AuditEvent } from '../../../application/ports/audit-log.port';
import type { GapFinding, VerifyAnswer } from '../../../application/queries/audit/audit.handlers';
import type { AuditReviewers, ReviewerRow } from '../../../application/queries/audit/audit.queries';
import type {
  ActorRefView as AppActorRefView,
  DecisionView as AppDecisionView,
  StepUpView as AppStepUpView,
} from '../../../application/views/decision.view';
import type * as app from '../../../application/views/views';
import type { ConversationUser, UserAssurance } from '../../../domain/conversation/conversation.aggregate';
import type { HaltResult, ResumeResult } from '../../../application/commands/halt/halt.command';
import type { StatusView as AppStatusView } from '../../../application/queries/get-status/get-status.query';
import type { DecisionOutcome } from '../../../domain/conversation/tool-call.entity';
import type { CallPreview } from '../../../domain/conversation/call-preview';
import { PreviewInputDto } from './preview.dto';
import type { ShadowVerdict, ToolFlags } from '../../../domain/policy/approval-policy';
import { RULE_DECISIONS, type PolicyDefaults, type PolicyRule } from '../../../domain/policy/policy-document';
import { TOOL_CALL_STATUSES, ToolCallStatus } from '../../../domain/conversation/tool-call-status';
import { HALT_SCOPES, HaltScope } from '../../../domain/halt/halt.aggregate';
import { SUPERVISION_LEVELS, SupervisionLevel } from '../../../domain/policy/supervision-level';
import { CHANNELS, Channel, OnBehalfOf } from '../../../domain/shared/actor';
import { EVENT_TYPES } from '../../../domain/shared/domain-event';
import type { Webhook, WebhookAttempt, WebhookDelivery } from '../../webhooks/webhook.store';
import { ANY_JSON } from './json-value';
import { DisplayDto } from './tool-call.dto';
import { PendingChangeView } from './change.dto';
import type { Holds, SameMembers } from '../../../application/views/view-guard';

/*
 * Response shapes as the OpenAPI document describes them, one class per view of src/application/views (which
 * stays free of swagger). Each class implements its view, and the list at the end of this file names both, so a
 * member a view gains or loses that its class here does not fails the typecheck (application/views/view-guard.ts);
 * test/e2e/openapi.e2e-spec.ts validates real answers against them, and the SDK's types are generated from them.
 */

type Call = app.ToolCallView;

const CHANNEL_USER =
  "The channel's own id of the user a person acted as (a Slack user id), when they decided through such a channel";
const ASSURANCES = ['client'] as const;
const ASSURANCE =
  "`client`: an MCP client relayed the decision from its chat; there is no proof that a person saw the call. Left out: the person decided in one of Tollgate's own surfaces (inbox, CLI, Slack, API)";

const DATE_TIME = { type: 'string', format: 'date-time', example: '2026-01-05T10:00:00.000Z' } as const;
const FREE_JSON_OBJECT = { type: 'object', additionalProperties: true } as const;

@ApiSchema({ name: 'ToolFlags', description: "A tool's flags: from the registry, else the proposal's annotations" })
export class ToolFlagsView implements ToolFlags {
  @ApiPropertyOptional() isReadOnly?: boolean;
  @ApiPropertyOptional() requiresApproval?: boolean;
  @ApiPropertyOptional() destructive?: boolean;
}

@ApiSchema({
  name: 'OnBehalfOf',
  description: 'The person a delegate acted for (their out-of-office delegation): their id, and name as on record',
})
export class OnBehalfOfView implements OnBehalfOf {
  @ApiProperty({ example: 'ann' }) id: string;
  @ApiPropertyOptional({ example: 'Ann' }) name?: string;
}

const ON_BEHALF_OF =
  "A delegate's decision: the person whose authority it was made with (`id` is the delegate who acted); absent otherwise";

@ApiSchema({ name: 'ActorRef', description: 'Who did something, and through which channel' })
export class ActorRefView implements AppActorRefView {
  @ApiProperty({ description: "A person's or agent's `sub`, or `policy` / `system`", example: 'ann' }) id: string;
  @ApiPropertyOptional({ example: 'Ann' }) name?: string;
  @ApiProperty({ enum: CHANNELS, enumName: 'Channel' }) via: Channel;
  @ApiPropertyOptional({ description: CHANNEL_USER, example: 'U0123ABC' }) channelUser?: string;
  @ApiPropertyOptional({ enum: ASSURANCES, enumName: 'Assurance', description: ASSURANCE }) assurance?: 'client';
  @ApiPropertyOptional({ type: () => OnBehalfOfView, description: ON_BEHALF_OF }) onBehalfOf?: OnBehalfOfView;
}

@ApiSchema({ name: 'ShadowVerdict', description: "A shadow rule's outcome for a call, recorded but never applied" })
export class ShadowVerdictView implements ShadowVerdict {
  @ApiProperty({ type: 'integer', description: 'Index of the shadow rule that would have decided' }) rule: number;
  @ApiProperty({ enum: SUPERVISION_LEVELS, enumName: 'SupervisionLevel' }) level: SupervisionLevel;
  @ApiProperty({ example: 'Rule 4 (delete_*): confirm (rateAbove: 21 calls in 1h by agent, above 20)' })
  reason: string;
}

@ApiSchema({ name: 'ToolCallPolicy', description: 'Why the policy judged the call as it did' })
export class ToolCallPolicyView implements app.ToolCallPolicyView {
  @ApiProperty({ enum: SUPERVISION_LEVELS, enumName: 'SupervisionLevel' }) level: SupervisionLevel;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Index of the deciding rule; null when no rule decided',
  })
  rule: number | null;
  @ApiProperty({ type: 'integer', description: '0 before the tenant has a policy' }) policyVersion: number;
  @ApiProperty({ example: 'Rule 2 (delete_source): confirm' }) reason: string;
  @ApiPropertyOptional({ type: () => ToolFlagsView, description: 'The flags the policy saw, when the tool had any' })
  toolFlags?: ToolFlagsView;
  @ApiPropertyOptional({
    type: () => ShadowVerdictView,
    description:
      'What a rule in shadow mode (`mode: shadow`) would have decided, when one would have: recorded, never applied',
  })
  shadow?: ShadowVerdictView;
}

@ApiSchema({ name: 'QuorumApprover', description: 'One approval counted towards a quorum' })
export class QuorumApproverView implements app.QuorumApproverView {
  @ApiProperty() id: string;
  @ApiPropertyOptional() name?: string;
  @ApiProperty({ example: 'web' }) via: string;
  @ApiProperty(DATE_TIME) at: string;
  @ApiPropertyOptional({ type: () => OnBehalfOfView, description: ON_BEHALF_OF }) onBehalfOf?: OnBehalfOfView;
}

@ApiSchema({
  name: 'ToolCallQuorum',
  description: 'A call that needs several distinct approvals: "1 of 2" is approvedBy.length of needed',
})
export class ToolCallQuorumView implements app.ToolCallQuorumView {
  @ApiProperty({ type: 'integer', minimum: 2, example: 2 }) needed: number;
  @ApiPropertyOptional({
    type: [String],
    description: 'Only approvals by people holding one of these roles count',
    example: ['finance'],
  })
  of?: string[];
  @ApiProperty({ type: () => [QuorumApproverView], description: 'Approvals so far, in order' })
  approvedBy: QuorumApproverView[];
}

@ApiSchema({ name: 'ToolCallApproval', description: 'Who may decide a held call, and until when' })
export class ToolCallApprovalView implements app.ToolCallApprovalState {
  @ApiProperty({ type: [String], example: ['requester', 'admin'] }) approvers: string[];
  @ApiProperty(DATE_TIME) expiresAt: string;
  @ApiPropertyOptional({
    enum: [false],
    description:
      "Separation of duties: the conversation's user and the agent's owner may not approve (403 self_approval)",
  })
  selfApproval?: false;
  @ApiPropertyOptional({
    enum: [false],
    description:
      'An approval relayed by an MCP chat client does not decide this call (403 chat_approval_not_allowed): decide it in the inbox, Slack or the CLI',
  })
  chatApproval?: false;
  @ApiPropertyOptional({
    enum: ['passkey'],
    enumName: 'StepUpMethod',
    description:
      'passkey: an approval needs a fresh passkey assertion made for this call and the exact arguments approved (POST /v1/tool-calls/{id}/step-up gives its options); without one, 403 step_up_required. Channels that cannot sign (Slack, the CLI, chat) link to the card in the inbox',
  })
  stepUp?: 'passkey';
  @ApiPropertyOptional({
    type: () => ToolCallQuorumView,
    description: 'When more than one distinct approval is needed',
  })
  quorum?: ToolCallQuorumView;
  @ApiPropertyOptional({
    type: [String],
    enum: ['slack', 'webhook', 'inbox', 'push', 'email'],
    description:
      'The channels that reach out to people about this call, when its rule names them (its `notify`); absent: all of them. The inbox lists the call whatever this says',
    example: ['push', 'email'],
  })
  notify?: string[];
  @ApiPropertyOptional({
    type: [String],
    enum: RULE_DECISIONS,
    description:
      "What a person may decide, when the call's rule narrows it (`allowedDecisions`); anything else answers 403 decision_not_allowed. `edit` is an approval with changed arguments",
    example: ['approve', 'reject'],
  })
  allowedDecisions?: string[];
  @ApiPropertyOptional({
    type: [String],
    description:
      "A rejection's reason must be one of these (shown as choices), unless `rejectFreeText`; another answers 403 decision_not_allowed",
    example: ['Wrong vendor', 'Amount too high'],
  })
  rejectReasons?: string[];
  @ApiPropertyOptional({ enum: [true], description: 'With rejectReasons: a person may write their own reason instead' })
  rejectFreeText?: true;
}

@ApiSchema({
  name: 'StepUp',
  description:
    'A proof of presence: the passkey that signed the approval. The whole assertion, with the challenge it answered, is in the decision event of the audit trail',
})
export class StepUpView implements AppStepUpView {
  @ApiProperty({ enum: ['passkey'], enumName: 'StepUpMethod' }) method: 'passkey';
  @ApiProperty({ description: "The passkey's credential id (base64url)", example: 'hV3x0Q2lWq8' }) credentialId: string;
  @ApiProperty({
    description: "The authenticator model's AAGUID (all zeros when it does not say)",
    example: '00000000-0000-0000-0000-000000000000',
  })
  aaguid: string;
  @ApiProperty({ enum: [true], description: 'The authenticator verified the user (PIN, biometrics)' })
  userVerified: true;
}

@ApiSchema({ name: 'ToolCallDecision' })
export class DecisionView implements AppDecisionView {
  @ApiProperty({ enum: ['approved', 'rejected', 'expired', 'cancelled'], enumName: 'DecisionOutcome' })
  outcome: DecisionOutcome;
  @ApiProperty({ type: () => ActorRefView }) by: ActorRefView;
  @ApiProperty(DATE_TIME) at: string;
  @ApiPropertyOptional() reason?: string;
  @ApiPropertyOptional({
    ...FREE_JSON_OBJECT,
    description: 'The arguments an approver ran instead of the proposed ones',
  })
  editedArguments?: Record<string, unknown>;
  @ApiPropertyOptional({
    type: () => StepUpView,
    description: "The passkey the approval was made with, when the call's rule asks for one (stepUp: passkey)",
  })
  stepUp?: StepUpView;
  @ApiPropertyOptional({
    maxLength: 4000,
    description:
      "respond: the person's answer to the agent instead of the tool running (the call is rejected; the agent gives this text to the model as the tool's answer)",
  })
  response?: string;
}

@ApiSchema({ name: 'ToolCallExecution', description: 'The claim of the run' })
export class ExecutionView implements NonNullable<Call['execution']> {
  @ApiProperty(DATE_TIME) at: string;
  @ApiProperty({ type: () => ActorRefView }) by: ActorRefView;
}

@ApiSchema({ name: 'ToolCallResult' })
export class ResultView implements NonNullable<Call['result']> {
  @ApiProperty({ enum: ['succeeded', 'failed'] }) outcome: 'succeeded' | 'failed';
  @ApiPropertyOptional({ ...ANY_JSON, description: 'Any JSON the agent reported' }) output?: unknown;
  @ApiPropertyOptional() error?: string;
  @ApiProperty(DATE_TIME) at: string;
}

@ApiSchema({ name: 'ToolCallCancellation', description: 'Why a halt cancelled the call' })
export class CancellationView implements NonNullable<Call['cancellation']> {
  @ApiProperty({ type: () => ActorRefView }) by: ActorRefView;
  @ApiProperty(DATE_TIME) at: string;
  @ApiProperty() reason: string;
}

@ApiSchema({
  name: 'Preview',
  description:
    "What the call will do, as proposed (agent-supplied: shown escaped), and its digest: the decision's and the receipt's `preview`",
})
export class PreviewView extends PreviewInputDto implements CallPreview {
  @ApiProperty({
    description: "SHA-256, base64url, of the RFC 8785 form of the other members (the receipt's `preview` claim)",
    example: 'n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg',
  })
  digest: string;
}

@ApiSchema({ name: 'ToolCall', description: 'A proposed tool call; members appear once they apply' })
export class ToolCallView implements Call {
  @ApiProperty({ description: "The server's id, unique across conversations", example: 'tc_7de0c1' }) id: string;
  @ApiPropertyOptional({ description: "The framework's own tool-call id, as proposed", example: 'call_2' })
  externalId?: string;
  @ApiProperty({ example: 'conv-1' }) conversationId: string;
  @ApiProperty({ example: 'delete_source' }) toolName: string;
  @ApiProperty({
    ...FREE_JSON_OBJECT,
    description: 'As proposed (an edit is in decision.editedArguments)',
    example: { id: 'src_2' },
  })
  arguments: Record<string, unknown>;
  @ApiPropertyOptional() reason?: string;
  @ApiPropertyOptional({ minimum: 0, maximum: 1 }) confidence?: number;
  @ApiPropertyOptional({ minimum: 0 }) estimatedCost?: number;
  @ApiPropertyOptional({ type: () => DisplayDto }) display?: DisplayDto;
  @ApiPropertyOptional({ type: () => PreviewView }) preview?: PreviewView;
  @ApiProperty({ enum: TOOL_CALL_STATUSES, enumName: 'ToolCallStatus' }) status: ToolCallStatus;
  @ApiProperty({ type: () => ToolCallPolicyView }) policy: ToolCallPolicyView;
  @ApiPropertyOptional({ type: () => ToolCallApprovalView, description: 'On calls held for a person' })
  approval?: ToolCallApprovalView;
  @ApiPropertyOptional({ type: () => DecisionView, description: 'Once decided, by a person or the policy' })
  decision?: DecisionView;
  @ApiPropertyOptional({ type: () => ExecutionView }) execution?: ExecutionView;
  @ApiPropertyOptional({ type: () => ResultView }) result?: ResultView;
  @ApiPropertyOptional({ type: () => CancellationView }) cancellation?: CancellationView;
  @ApiProperty(DATE_TIME) createdAt: string;
  @ApiProperty(DATE_TIME) updatedAt: string;
  @ApiPropertyOptional({
    type: () => PendingChangeView,
    description:
      "A decision's answer only: a tenant-wide always_allow under `governance: {quorum}` approves the call at once, and its grant waits for other admins as this pending change",
  })
  pendingChange?: PendingChangeView;
}

@ApiSchema({
  name: 'ConversationUser',
  description: "The conversation's end user: verified from their own token (user.token), or as the agent named them",
})
export class ConversationUserView implements ConversationUser {
  @ApiProperty({ example: 'ann' }) id: string;
  @ApiProperty({ type: [String], example: ['admin'] }) roles: string[];
  @ApiPropertyOptional({ example: 'Ann' }) name?: string;
  @ApiProperty({
    enum: ['verified', 'asserted'],
    enumName: 'UserAssurance',
    description:
      "verified: Tollgate verified the user's own identity provider token (user.token) and took the id, roles and name from it; asserted: the agent named the user (its word only)",
  })
  assurance: UserAssurance;
}

@ApiSchema({ name: 'Conversation' })
export class ConversationView implements app.ConversationView {
  @ApiProperty({ example: 'conv-1' }) id: string;
  @ApiProperty({ description: 'The `sub` of the agent that started it', example: 'support-bot' }) agentId: string;
  @ApiProperty({ type: () => ConversationUserView, nullable: true }) user: ConversationUserView | null;
  @ApiProperty({ type: 'string', nullable: true }) title: string | null;
  @ApiProperty(FREE_JSON_OBJECT) metadata: Record<string, unknown>;
  @ApiProperty({
    enum: ['active', 'blocked', 'halted'],
    enumName: 'ConversationStatus',
    description: 'blocked: a call waits for a person; halted: a halt covers it',
  })
  status: 'active' | 'blocked' | 'halted';
  @ApiProperty({ type: 'integer' }) pendingCount: number;
  @ApiPropertyOptional({
    type: () => [ToolCallView],
    description: "Every call, oldest first; left out of lists and of a proposal's answer",
  })
  toolCalls?: ToolCallView[];
  @ApiProperty(DATE_TIME) createdAt: string;
  @ApiProperty(DATE_TIME) updatedAt: string;
}

@ApiSchema({
  name: 'ProposalClaim',
  description: "A claim made with the proposal: the call's arguments to run and its receipt",
})
export class ProposalClaimView {
  @ApiProperty({ example: 'tc_01J…' }) toolCallId: string;
  @ApiProperty({ ...FREE_JSON_OBJECT, description: 'The arguments to run' })
  arguments: Record<string, unknown>;
  @ApiProperty({
    description: "A compact JWS (EdDSA) for the tool's backend, as the claim answers it (see ExecutionClaim)",
  })
  receipt: string;
}

@ApiSchema({ name: 'Proposal', description: "A step's calls, each already approved, rejected or pending" })
export class ProposalView {
  @ApiProperty({ type: () => ConversationView, description: 'Without its call history' })
  conversation: ConversationView;
  @ApiProperty({ type: () => [ToolCallView] }) toolCalls: ToolCallView[];
  @ApiPropertyOptional({
    type: () => [ProposalClaimView],
    description:
      'Present when the proposal asked to `claim`: the claim of each call of the step that stood approved and unclaimed (now `executed`). A call claimed before is never claimed again: a retry finds it `executed`',
  })
  claims?: ProposalClaimView[];
}

@ApiSchema({ name: 'StepDecisionRefusal', description: 'A call of the step this decision did not change, and why' })
export class StepDecisionRefusalView {
  @ApiProperty() id: string;
  @ApiProperty({
    example: 'self_approval',
    description: 'The problem code deciding this call alone would have answered',
  })
  code: string;
  @ApiProperty() detail: string;
}

@ApiSchema({
  name: 'StepDecision',
  description: 'Each call of the step decided on its own: those decided, and those refused',
})
export class StepDecisionView {
  @ApiProperty({
    type: () => [ToolCallView],
    description: 'The calls decided, as they now stand (a quorum may keep one pending)',
  })
  toolCalls: ToolCallView[];
  @ApiProperty({ type: () => [StepDecisionRefusalView] }) refused: StepDecisionRefusalView[];
}

@ApiSchema({ name: 'ExecutionClaim' })
export class ExecutionClaimView {
  @ApiProperty({ type: () => ToolCallView, description: 'Now executed' }) toolCall: ToolCallView;
  @ApiProperty({
    ...FREE_JSON_OBJECT,
    description: 'The arguments to run: the edited ones when an approver edited them',
  })
  arguments: Record<string, unknown>;
  @ApiProperty({
    description:
      "A compact JWS (EdDSA) for the tool's backend: claims tcid, conv, tool, args (SHA-256 of the JCS arguments), approvedBy, iat, exp, jti",
    example: 'eyJhbGciOiJFZERTQSIs…',
  })
  receipt: string;
}

@ApiSchema({ name: 'ApprovalConversation' })
export class ApprovalConversationView implements app.ApprovalConversationView {
  @ApiProperty() id: string;
  @ApiProperty() agentId: string;
  @ApiProperty({ type: () => ConversationUserView, nullable: true }) user: ConversationUserView | null;
  @ApiProperty({ type: 'string', nullable: true }) title: string | null;
}

@ApiSchema({ name: 'Approval', description: 'An inbox entry: the call and enough of its conversation to judge it' })
export class ApprovalView extends ToolCallView implements app.ApprovalView {
  @ApiProperty({ type: () => ApprovalConversationView }) conversation: ApprovalConversationView;
}

@ApiSchema({ name: 'ToolRegistrant' })
export class ToolRegistrantView implements app.ToolRegistrantView {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['admin', 'agent'], description: 'An agent cannot change a tool an admin registered' }) kind:
    'admin' | 'agent';
}

@ApiSchema({ name: 'Tool' })
export class ToolView implements app.ToolView {
  @ApiProperty({ example: 'delete_source' }) name: string;
  @ApiProperty({ type: 'string', nullable: true }) description: string | null;
  @ApiProperty() isReadOnly: boolean;
  @ApiProperty() requiresApproval: boolean;
  @ApiProperty() destructive: boolean;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: "The JSON Schema of the tool's input, as registered: forms for editing; edits are checked against it",
  })
  inputSchema?: Record<string, unknown>;
  @ApiPropertyOptional({ type: [String], description: 'The argument names whose values are masked' })
  redact?: string[];
  @ApiProperty({ type: () => ToolRegistrantView }) registeredBy: ToolRegistrantView;
  @ApiProperty(DATE_TIME) createdAt: string;
  @ApiProperty(DATE_TIME) updatedAt: string;
}

/** The policy's own schemas (PolicyDefaultsInForce, PolicyRule) come from policy-schema.ts, added by openapi.ts. */
@ApiSchema({ name: 'Policy', description: "The tenant's policy in force" })
export class PolicyView implements app.PolicyView {
  @ApiProperty({
    type: 'integer',
    description: 'Rises by one per accepted document; 0: no policy yet, the built-in defaults',
  })
  version: number;
  @ApiProperty({ allOf: [{ $ref: '#/components/schemas/PolicyDefaultsInForce' }] }) defaults: PolicyDefaults;
  @ApiProperty({ type: 'array', items: { $ref: '#/components/schemas/PolicyRule' } }) rules: PolicyRule[];
  @ApiProperty({ ...DATE_TIME, nullable: true }) updatedAt: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'Who put this version (a `sub`, or policy-file)' })
  updatedBy: string | null;
}

@ApiSchema({ name: 'Actor', description: 'Who acted, as the audit trail records them' })
export class ActorView {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['person', 'agent', 'system'], enumName: 'ActorKind' }) kind: 'person' | 'agent' | 'system';
  @ApiProperty({ enum: CHANNELS, enumName: 'Channel' }) via: Channel;
  @ApiPropertyOptional() name?: string;
  @ApiPropertyOptional({ type: [String] }) roles?: string[];
  @ApiPropertyOptional({ description: CHANNEL_USER, example: 'U0123ABC' }) channelUser?: string;
  @ApiPropertyOptional({ enum: ASSURANCES, enumName: 'Assurance', description: ASSURANCE }) assurance?: 'client';
  @ApiPropertyOptional({ type: () => OnBehalfOfView, description: ON_BEHALF_OF }) onBehalfOf?: OnBehalfOfView;
}

@ApiSchema({ name: 'Halt', description: 'A halt in force' })
export class HaltView implements app.HaltView {
  @ApiProperty({ enum: HALT_SCOPES, enumName: 'HaltScope' }) scope: HaltScope;
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: "The agent's sub or the conversation's id; null for the tenant",
  })
  id: string | null;
  @ApiProperty() reason: string;
  @ApiProperty({ type: () => ActorRefView }) by: ActorRefView;
  @ApiProperty(DATE_TIME) at: string;
}

@ApiSchema({ name: 'HaltResult' })
export class HaltResultView extends HaltView implements HaltResult {
  @ApiProperty({ enum: [true] }) halted: true;
  @ApiProperty({ description: 'false: it was halted already, and nothing changed' }) changed: boolean;
  @ApiProperty({ type: [String], description: 'The pending and approved-but-unclaimed calls this halt cancelled' })
  cancelledToolCallIds: string[];
}

@ApiSchema({ name: 'ResumeResult' })
export class ResumeResultView implements ResumeResult {
  @ApiProperty({ enum: HALT_SCOPES, enumName: 'HaltScope' }) scope: HaltScope;
  @ApiProperty({ type: 'string', nullable: true }) id: string | null;
  @ApiProperty({ enum: [false] }) halted: false;
  @ApiProperty({ description: 'false: it was not halted, and nothing changed' }) changed: boolean;
}

@ApiSchema({ name: 'Me', description: 'Who the caller is, as their token establishes them' })
export class MeView implements app.MeView {
  @ApiProperty({ description: "The token's `sub`", example: 'ann' }) id: string;
  @ApiProperty({ description: 'The tenant the token acts in: every other answer is confined to it', example: 'acme' })
  tenant: string;
  @ApiProperty({
    enum: ['person', 'agent'],
    enumName: 'PrincipalKind',
    description: 'An agent token (role `agent`) is an agent whatever else it claims',
  })
  kind: 'person' | 'agent';
  @ApiProperty({ type: 'string', nullable: true, example: 'Ann' }) name: string | null;
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: "The token's `email` claim, when it carries a well-formed one",
    example: 'ann@example.com',
  })
  email: string | null;
  @ApiProperty({
    type: [String],
    description: 'The roles as they count here: `["agent"]` for an agent token',
    example: ['admin'],
  })
  roles: string[];
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: "An agent's owner (its token's `owner` claim); null for people",
  })
  owner: string | null;
}

@ApiSchema({ name: 'Status', description: 'The halts in force in the tenant' })
export class StatusView implements AppStatusView {
  @ApiProperty() tenant: string;
  @ApiProperty({ description: 'A halt covers the whole tenant' }) halted: boolean;
  @ApiProperty({ type: () => [HaltView] }) halts: HaltView[];
}

@ApiSchema({
  name: 'AuditEvent',
  description: 'An event exactly as stored and hashed: hash = sha256hex(prevHash + JCS(event without hash))',
})
export class AuditEventView implements AuditEvent {
  @ApiProperty({ type: 'integer', description: 'Rises by one per event within a tenant' }) seq: number;
  @ApiProperty() id: string;
  @ApiProperty({ enum: EVENT_TYPES, enumName: 'EventType' }) type: string;
  @ApiProperty(DATE_TIME) at: string;
  @ApiProperty(DATE_TIME) recordedAt: string;
  @ApiProperty() tenant: string;
  @ApiProperty({ description: 'The server instance that wrote it' }) instanceId: string;
  @ApiPropertyOptional({ description: 'The X-Request-Id of the request that wrote it' }) correlationId?: string;
  @ApiPropertyOptional() conversationId?: string;
  @ApiPropertyOptional() toolCallId?: string;
  @ApiPropertyOptional() toolName?: string;
  @ApiProperty({ type: () => ActorView }) actor: Record<string, unknown>;
  @ApiProperty({ ...FREE_JSON_OBJECT, description: "The event's own data, by type (docs/API.md#audit)" }) data: Record<
    string,
    unknown
  >;
  @ApiProperty({ description: '64 hex digits; 64 zeros for the first event' }) prevHash: string;
  @ApiProperty({ description: '64 hex digits' }) hash: string;
}

@ApiSchema({ name: 'AuditEventPage' })
export class AuditEventPageView {
  @ApiProperty({ type: () => [AuditEventView] }) events: AuditEventView[];
  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  nextCursor: string | null;
}

@ApiSchema({ name: 'VerifiedCheckpoint', description: 'The checkpoint verify held the chain against' })
export class VerifiedCheckpointView implements NonNullable<VerifyAnswer['checkpoint']> {
  @ApiProperty() tenant: string;
  @ApiProperty({ type: 'integer' }) seq: number;
  @ApiProperty() hash: string;
  @ApiProperty(DATE_TIME) at: string;
  @ApiProperty({ description: 'The key that signed it' }) kid: string;
  @ApiPropertyOptional({
    enum: [true],
    description: "A retention purge removed the checkpoint's event; the purge recorded its hash",
  })
  purged?: true;
  @ApiProperty({
    enum: ['request', 'sink'],
    description:
      'request: the checkpoint given; sink: the latest the scheduler wrote to the file sink (TOLLGATE_CHECKPOINT_SINK)',
  })
  source: 'request' | 'sink';
  @ApiPropertyOptional({ description: "For source sink: the checkpoint's file name in the tenant's directory" })
  name?: string;
}

@ApiSchema({ name: 'VerifyResult' })
export class VerifyResultView implements VerifyAnswer {
  @ApiProperty({ description: 'The chain is intact (and reaches the checkpoint, when one was given)' }) ok: boolean;
  @ApiProperty({ type: 'integer', description: 'Events recomputed' }) checked: number;
  @ApiPropertyOptional({ type: 'integer' }) firstBadSeq?: number;
  @ApiPropertyOptional({ description: 'What is wrong at firstBadSeq, for people' }) problem?: string;
  @ApiPropertyOptional({ type: () => VerifiedCheckpointView }) checkpoint?: VerifiedCheckpointView;
  @ApiPropertyOptional({
    description:
      'Without a checkpoint given: why none from the sink could be used (an https sink, which is not read back; a sink that cannot be read)',
  })
  noCheckpoint?: string;
}

@ApiSchema({ name: 'AuditCheckpoint', description: "The chain's head, signed with the receipt key" })
export class AuditCheckpointView {
  @ApiProperty({ description: 'Compact JWS (typ tollgate-checkpoint+jwt) over {tenant, seq, hash, at}' }) jws: string;
  @ApiProperty() tenant: string;
  @ApiProperty({ type: 'integer' }) seq: number;
  @ApiProperty() hash: string;
  @ApiProperty(DATE_TIME) at: string;
}

@ApiSchema({
  name: 'AuditMetrics',
  description: "Approved and rejected count people's decisions; autoApproved and denied the policy's",
})
export class AuditMetricsView {
  @ApiProperty({ type: 'integer', description: 'Now, whatever the window' }) pendingApprovals: number;
  @ApiProperty({ type: 'integer' }) approvedCount: number;
  @ApiProperty({ type: 'integer' }) rejectedCount: number;
  @ApiProperty({ type: 'integer' }) timeoutCount: number;
  @ApiProperty({ type: 'integer' }) cancelledCount: number;
  @ApiProperty({ type: 'integer' }) autoApprovedCount: number;
  @ApiProperty({ type: 'integer' }) deniedCount: number;
  @ApiProperty({ type: 'number', nullable: true, description: 'null without decisions' }) avgApprovalLatencyMs:
    number | null;
  @ApiProperty({ type: 'number', nullable: true }) p95ApprovalLatencyMs: number | null;
}

@ApiSchema({ name: 'GapFinding' })
export class GapFindingView implements GapFinding {
  @ApiProperty({
    enum: ['HITL-EXEC', 'HITL-01', 'HITL-02', 'HITL-03', 'RUN-01'],
    description:
      'HITL-EXEC: a call that needed a person ran without one; HITL-01: a destructive tool the policy lets run on its own; HITL-02: the policy can ask people, yet no approval was requested; HITL-03: a person approved at least 10 calls in the window, half or more within 2 s of being shown the card (rubber-stamping); RUN-01: a call claimed over 15 minutes ago has no outcome on record (still running, or the agent stopped before reporting)',
  })
  code: GapFinding['code'];
  @ApiProperty({ enum: ['critical', 'high', 'medium'] }) severity: GapFinding['severity'];
  @ApiPropertyOptional() toolName?: string;
  @ApiPropertyOptional() toolCallId?: string;
  @ApiPropertyOptional({ description: 'HITL-03: the person whose approvals look rubber-stamped' }) personId?: string;
  @ApiProperty() detail: string;
}

@ApiSchema({ name: 'AuditGaps' })
export class AuditGapsView {
  @ApiProperty({ type: () => [GapFindingView] }) findings: GapFindingView[];
}

// Issue 28 part 9: reviewer quality (GET /v1/audit/reviewers).
@ApiSchema({ name: 'ReviewerStats', description: 'One person who decided held calls in the window' })
export class ReviewerStatsView implements ReviewerRow {
  @ApiProperty() personId: string;
  @ApiProperty({ type: 'integer', description: 'Approvals and rejections (a quorum approval counts)' })
  decisions: number;
  @ApiProperty({ type: 'integer' }) approvals: number;
  @ApiProperty({ type: 'integer' }) rejections: number;
  @ApiProperty({ type: 'number', minimum: 0, maximum: 1, description: 'approvals / decisions' }) approveRate: number;
  @ApiProperty({
    type: 'integer',
    description:
      'Median time to decide: from when the card was shown to this person (the later of the request and their first view the server recorded) to the decision',
  })
  medianDecideMs: number;
  @ApiProperty({ type: 'integer', description: '90th percentile of the time to decide' }) p90DecideMs: number;
  @ApiProperty({ type: 'integer', description: 'Decisions made within thresholds.quickMs of being shown' })
  quickDecisions: number;
  @ApiProperty({ type: 'integer', description: 'Approvals made within thresholds.quickMs of being shown' })
  quickApprovals: number;
  @ApiProperty({ description: 'HITL-03: at least minApprovals approvals, at least minQuickShare of them quick' })
  rubberStamping: boolean;
  @ApiProperty({
    type: 'integer',
    description:
      'Decisions with no view of the card recorded before them (an email or push link, an approval from the list without opening the card): timed from the request instead',
  })
  unviewedDecisions: number;
  @ApiProperty({
    type: 'number',
    minimum: 0,
    maximum: 1,
    description:
      'unviewedDecisions / decisions: a high share means the times above say little (a channel that records no view)',
  })
  unviewedShare: number;
}

@ApiSchema({ name: 'ReviewerThresholds' })
export class ReviewerThresholdsView {
  @ApiProperty({ type: 'integer', example: 2000 }) quickMs: number;
  @ApiProperty({ type: 'integer', example: 10 }) minApprovals: number;
  @ApiProperty({ type: 'number', example: 0.5 }) minQuickShare: number;
}

@ApiSchema({ name: 'AuditReviewers' })
export class AuditReviewersView implements AuditReviewers {
  @ApiProperty({ type: () => [ReviewerStatsView], description: 'In order of personId' }) reviewers: ReviewerStatsView[];
  @ApiProperty({ description: 'The window held more than 50 000 decisions: the first ones were weighed; narrow it' })
  truncated: boolean;
  @ApiProperty({ type: () => ReviewerThresholdsView }) thresholds: ReviewerThresholdsView;
}

@ApiSchema({ name: 'AuditPurgeResult' })
export class AuditPurgeResultView {
  @ApiProperty(DATE_TIME) before: string;
  @ApiProperty({ type: 'integer' }) purgedCount: number;
  @ApiPropertyOptional({ type: 'integer' }) firstPurgedSeq?: number;
  @ApiPropertyOptional({ type: 'integer' }) lastPurgedSeq?: number;
}

@ApiSchema({ name: 'WebhookCreator' })
export class WebhookCreatorView implements NonNullable<Webhook['createdBy']> {
  @ApiProperty() id: string;
  @ApiPropertyOptional() name?: string;
}

@ApiSchema({ name: 'Webhook' })
export class WebhookView implements Webhook {
  @ApiProperty() id: string;
  @ApiProperty() url: string;
  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...EVENT_TYPES, '*'] } }) events: string[];
  @ApiProperty({ type: 'string', nullable: true }) description: string | null;
  @ApiProperty({ type: () => WebhookCreatorView }) createdBy: WebhookCreatorView;
  @ApiProperty(DATE_TIME) createdAt: string;
}

@ApiSchema({ name: 'CreatedWebhook', description: 'The webhook, with its secret: shown only in this answer' })
export class CreatedWebhookView extends WebhookView {
  @ApiProperty({ description: 'whsec_ + base64: verify each delivery with it (Standard Webhooks)' }) secret: string;
}

@ApiSchema({ name: 'WebhookAttempt' })
export class WebhookAttemptView implements WebhookAttempt {
  @ApiProperty(DATE_TIME) at: string;
  @ApiPropertyOptional({ type: 'integer', description: "The receiver's HTTP status; absent when no answer came" })
  status?: number;
  @ApiPropertyOptional({
    description: '`HTTP <status>`, or destination_not_allowed, dns_failed, connect_failed, timeout',
  })
  error?: string;
  @ApiProperty({ type: 'integer' }) durationMs: number;
}

@ApiSchema({ name: 'WebhookDelivery' })
export class WebhookDeliveryView implements WebhookDelivery {
  @ApiProperty({ description: "The webhook-id header: the event's id" }) id: string;
  @ApiProperty({ enum: EVENT_TYPES, enumName: 'EventType' }) eventType: string;
  @ApiProperty({ type: 'integer' }) eventSeq: number;
  @ApiProperty({ enum: ['pending', 'delivered', 'failed'] }) status: WebhookDelivery['status'];
  @ApiProperty({ type: () => [WebhookAttemptView] }) attempts: WebhookAttemptView[];
  @ApiProperty({ ...DATE_TIME, nullable: true }) nextAttemptAt: string | null;
  @ApiProperty(DATE_TIME) createdAt: string;
  @ApiProperty({ ...DATE_TIME, nullable: true }) deliveredAt: string | null;
}

@ApiSchema({ name: 'Jwk', description: 'An Ed25519 public key (RFC 8037)' })
export class JwkView {
  @ApiProperty({ enum: ['OKP'] }) kty: string;
  @ApiProperty({ enum: ['Ed25519'] }) crv: string;
  @ApiProperty({ description: 'The public key, base64url' }) x: string;
  @ApiProperty() kid: string;
  @ApiProperty({ enum: ['EdDSA'] }) alg: string;
  @ApiProperty({ enum: ['sig'] }) use: string;
}

@ApiSchema({ name: 'Jwks', description: 'The keys that sign receipts and audit checkpoints' })
export class JwksView {
  @ApiProperty({ type: () => [JwkView] }) keys: JwkView[];
}

@ApiSchema({
  name: 'HealthCheck',
  description: '@nestjs/terminus: each check by name, with status up or down (and why)',
})
export class HealthCheckView {
  @ApiProperty({ enum: ['ok', 'error', 'shutting_down'] }) status: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'object', additionalProperties: true },
    description: 'The checks that are up',
  })
  info?: Record<string, unknown>;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'object', additionalProperties: true },
    description: 'The checks that are down',
  })
  error?: Record<string, unknown>;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'object', additionalProperties: true },
    example: { database: { status: 'up' } },
  })
  details: Record<string, unknown>;
}

/** A page of a list: pass `nextCursor` as `cursor` for the next one. */
function pageOf<T>(name: string, item: () => new () => T) {
  @ApiSchema({ name })
  class PageView {
    @ApiProperty({ type: () => [item()] }) items: T[];
    @ApiProperty({
      type: 'string',
      nullable: true,
      description: 'Pass as `cursor` for the next page; null on the last',
    })
    nextCursor: string | null;
  }
  return PageView;
}

export const ToolPageView = pageOf('ToolPage', () => ToolView);
export const ConversationPageView = pageOf('ConversationPage', () => ConversationView);
export const ApprovalPageView = pageOf('ApprovalPage', () => ApprovalView);
export const WebhookPageView = pageOf('WebhookPage', () => WebhookView);
export const WebhookDeliveryPageView = pageOf('WebhookDeliveryPage', () => WebhookDeliveryView);

/* Each class and its view name the same members (application/views/view-guard.ts says why). */
export type ViewGuards = [
  Holds<SameMembers<ToolFlagsView, ToolFlags>>,
  Holds<SameMembers<ActorRefView, AppActorRefView>>,
  Holds<SameMembers<OnBehalfOfView, OnBehalfOf>>,
  Holds<SameMembers<ToolCallView, Call>>,
  Holds<SameMembers<ToolCallPolicyView, app.ToolCallPolicyView>>,
  Holds<SameMembers<ToolCallApprovalView, app.ToolCallApprovalState>>,
  Holds<SameMembers<ToolCallQuorumView, app.ToolCallQuorumView>>,
  Holds<SameMembers<QuorumApproverView, app.QuorumApproverView>>,
  Holds<SameMembers<DecisionView, AppDecisionView>>,
  Holds<SameMembers<StepUpView, AppStepUpView>>,
  Holds<SameMembers<ExecutionView, NonNullable<Call['execution']>>>,
  Holds<SameMembers<ResultView, NonNullable<Call['result']>>>,
  Holds<SameMembers<CancellationView, NonNullable<Call['cancellation']>>>,
  Holds<SameMembers<ConversationView, app.ConversationView>>,
  Holds<SameMembers<ConversationUserView, ConversationUser>>,
  Holds<SameMembers<ApprovalView, app.ApprovalView>>,
  Holds<SameMembers<ApprovalConversationView, app.ApprovalConversationView>>,
  Holds<SameMembers<ToolView, app.ToolView>>,
  Holds<SameMembers<ToolRegistrantView, app.ToolRegistrantView>>,
  Holds<SameMembers<PolicyView, app.PolicyView>>,
  Holds<SameMembers<HaltView, app.HaltView>>,
  Holds<SameMembers<HaltResultView, HaltResult>>,
  // A held resume answers 202 with its pending change (HeldForApproval), never in this 200 answer.
  Holds<SameMembers<ResumeResultView, Omit<ResumeResult, 'pendingChange'>>>,
  Holds<SameMembers<StatusView, AppStatusView>>,
  Holds<SameMembers<MeView, app.MeView>>,
  Holds<SameMembers<AuditEventView, AuditEvent>>,
  Holds<SameMembers<VerifyResultView, VerifyAnswer>>,
  Holds<SameMembers<VerifiedCheckpointView, NonNullable<VerifyAnswer['checkpoint']>>>,
  Holds<SameMembers<GapFindingView, GapFinding>>,
  Holds<SameMembers<ReviewerStatsView, ReviewerRow>>,
  Holds<SameMembers<AuditReviewersView, AuditReviewers>>,
  Holds<SameMembers<WebhookCreatorView, Webhook['createdBy']>>,
  Holds<SameMembers<WebhookView, Webhook>>,
  Holds<SameMembers<WebhookAttemptView, WebhookAttempt>>,
  Holds<SameMembers<WebhookDeliveryView, WebhookDelivery>>,
  Holds<SameMembers<InstanceType<typeof ToolPageView>, app.Page<ToolView>>>,
];
