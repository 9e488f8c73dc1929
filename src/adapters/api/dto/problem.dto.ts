import { applyDecorators } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
  ApiResponse,
  ApiSchema,
  getSchemaPath,
} from '@nestjs/swagger';
import { TOOL_CALL_STATUSES } from '../../../domain/conversation/tool-call-status';
import { HALT_SCOPES } from '../../../domain/halt/halt.aggregate';
import { GRANT_LIMITS } from '../../../domain/policy/grant-limit';
import { DecisionView } from './views.dto';
import { PROBLEM_CONTENT_TYPE, problem } from '../problem';

@ApiSchema({ name: 'ValidationFault' })
export class ValidationFaultView {
  @ApiProperty({
    description:
      'Where the fault is: a body path (`toolCalls[0].toolName`), a query parameter or a header name; empty for the whole body',
    example: 'toolCalls[0].toolName',
  })
  path: string;

  @ApiProperty({ example: 'must match ^[A-Za-z0-9_.:-]{1,128}$' })
  message: string;
}

/**
 * RFC 9457 problem details, the body of every error (`application/problem+json`). `code` is stable and meant
 * for programs; `detail` is for people. The optional members appear only with the codes their descriptions name.
 */
@ApiSchema({ name: 'Problem' })
export class ProblemView {
  @ApiProperty({ description: '`urn:tollgate:problem:<code>`', example: 'urn:tollgate:problem:not_found' })
  type: string;

  @ApiProperty({ description: "The status's reason phrase", example: 'Not Found' })
  title: string;

  @ApiProperty({ type: 'integer', description: 'The HTTP status, repeated', example: 404 })
  status: number;

  @ApiProperty({ description: 'What went wrong, for people; it may change', example: 'Tool call tc_0 not found' })
  detail: string;

  @ApiProperty({
    description:
      'Stable and machine-readable: validation_failed, unauthenticated, forbidden, not_found, conversation_blocked, already_decided, … (docs/API.md#errors)',
    example: 'not_found',
  })
  code: string;

  @ApiPropertyOptional({ type: [ValidationFaultView], description: 'validation_failed: one entry per fault' })
  errors?: ValidationFaultView[];

  @ApiPropertyOptional({ type: [String], description: 'conversation_blocked: the calls still waiting for a person' })
  pendingToolCallIds?: string[];

  @ApiPropertyOptional({
    description:
      'step_up_required, step_up_mismatch, step_up_not_required, no_passkey, chat_approval_not_allowed: the call',
  })
  toolCallId?: string;

  @ApiPropertyOptional({
    description:
      "step_up_required, step_up_mismatch, no_passkey, chat_approval_not_allowed: the call's card in the web inbox",
    example: '/#/calls/tc_1',
  })
  card?: string;

  @ApiPropertyOptional({
    enum: ['passkey'],
    description: 'step_up_required, step_up_mismatch, no_passkey: what the call needs',
  })
  stepUp?: 'passkey';

  @ApiPropertyOptional({ type: () => DecisionView, description: 'already_decided: the standing decision' })
  decision?: DecisionView;

  @ApiPropertyOptional({
    enum: TOOL_CALL_STATUSES,
    enumName: 'ToolCallStatus',
    description: 'already_decided, not_approved, already_executed, not_executed: the status of the call now',
  })
  toolCallStatus?: string;

  @ApiPropertyOptional({
    enum: ['pending', 'answered', 'expired', 'cancelled'],
    description: 'already_answered: the status of the question now',
  })
  questionStatus?: string;

  @ApiPropertyOptional({
    type: 'integer',
    description: 'too_many_open_questions, too_many_delegations: the limit reached',
  })
  limit?: number;

  @ApiPropertyOptional({
    enum: ['conversation', 'agent', 'tenant'],
    enumName: 'GrantScope',
    description: 'forbidden (a standing grant): the scope asked for',
  })
  requestedScope?: string;

  @ApiPropertyOptional({
    enum: GRANT_LIMITS,
    enumName: 'GrantLimit',
    description: 'forbidden (a standing grant): the widest scope the caller and the policy allow',
  })
  allowedScope?: string;

  @ApiPropertyOptional({
    enum: HALT_SCOPES,
    enumName: 'HaltScope',
    description:
      'halted: the scope of the halt in force; too_many_open_questions: which limit, `conversation` or `agent`',
  })
  scope?: string;

  @ApiPropertyOptional({
    type: 'integer',
    description:
      'rate_limited (failed authentications, open waits) and unavailable: seconds to wait, also sent as Retry-After',
  })
  retryAfter?: number;
}

/** One example per code; `detail` texts are what the server says, trimmed. */
interface ExampleSpec {
  status: number;
  summary: string;
  detail: string;
  extra?: Record<string, unknown>;
}

const EXAMPLES = {
  validation_failed: {
    status: 400,
    summary: 'The request breaks its documented shape',
    detail: 'toolCalls[0].toolName: must match ^[A-Za-z0-9_.:-]{1,128}$',
    extra: { errors: [{ path: 'toolCalls[0].toolName', message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' }] },
  },
  unauthenticated: {
    status: 401,
    summary: 'No bearer token, or one that does not verify',
    detail: 'Send Authorization: Bearer <JWT>',
  },
  forbidden: { status: 403, summary: 'The role is lacking', detail: 'This needs one of the roles: admin' },
  decision_not_allowed: {
    status: 403,
    summary: "A decision the call's rule does not allow (allowedDecisions, rejectReasons)",
    detail: 'This call\'s rule takes one of these reasons: "duplicate", "wrong amount"',
  },
  grant_forbidden: {
    status: 403,
    summary: 'A standing grant wider than the caller or the policy allows',
    detail: 'Only an admin may make a standing grant in scope tenant; you may grant at most scope conversation',
    extra: { requestedScope: 'tenant', allowedScope: 'conversation' },
  },
  step_up_required: {
    status: 403,
    summary: "The call's rule asks for a passkey, and no assertion proved a present person approved",
    detail: 'This call needs a passkey: approve it in the Tollgate inbox, where your passkey signs for it',
    extra: { toolCallId: 'tc_1', card: '/#/calls/tc_1', stepUp: 'passkey' },
  },
  step_up_mismatch: {
    status: 403,
    summary: 'The passkey signed for another call or other arguments',
    detail: 'The passkey signed for other arguments than the ones approved',
    extra: { toolCallId: 'tc_1', card: '/#/calls/tc_1', stepUp: 'passkey' },
  },
  passkey_invalid: {
    status: 400,
    summary: 'A passkey registration that does not verify',
    detail: 'The registration answers no challenge issued to you, or one used or expired',
  },
  step_up_not_required: {
    status: 409,
    summary: "The call's rule asks no passkey",
    detail: "This call's rule asks no passkey: decide it without one",
    extra: { toolCallId: 'tc_1' },
  },
  no_passkey: {
    status: 409,
    summary: 'The call needs a passkey and the person has none',
    detail: 'This call needs a passkey and you have none: register one in the inbox (Passkeys), then approve',
    extra: { toolCallId: 'tc_1', card: '/#/calls/tc_1', stepUp: 'passkey' },
  },
  too_many_passkeys: {
    status: 409,
    summary: 'The person holds as many passkeys as one may',
    detail: 'A person holds at most 20 passkeys: remove one before adding another',
  },
  not_found: {
    status: 404,
    summary: 'No such resource, or one the caller may not see',
    detail: 'Tool call tc_0 not found',
  },
  conversation_blocked: {
    status: 409,
    summary: 'A call from an earlier step still waits for a person',
    detail: 'The conversation is waiting for 1 pending approval(s): tc_1',
    extra: { pendingToolCallIds: ['tc_1'] },
  },
  idempotency_mismatch: {
    status: 409,
    summary: 'An id reused with different content',
    detail: 'Tool call id call_1 was already proposed in this conversation with different content',
  },
  already_decided: {
    status: 409,
    summary: 'The call is no longer pending',
    detail: 'Tool call tc_1 is already rejected',
    extra: {
      decision: {
        outcome: 'rejected',
        by: { id: 'ann', name: 'Ann', via: 'web' },
        at: '2026-01-05T10:00:00.000Z',
        reason: 'not today',
      },
      toolCallStatus: 'rejected',
    },
  },
  too_many_open_questions: {
    status: 409,
    summary: 'The agent has as many open questions as it may',
    detail:
      'The agent already has 20 open questions in this conversation: wait for an answer (or their expiry) before asking more',
    extra: { limit: 20, scope: 'conversation' },
  },
  already_answered: {
    status: 409,
    summary: 'The question is no longer pending',
    detail: 'Question q_1 was already answered',
    extra: { questionStatus: 'answered' },
  },
  not_approved: {
    status: 409,
    summary: 'The call is not approved',
    detail: 'Tool call tc_1 is pending, not approved: it must not run',
    extra: { toolCallStatus: 'pending' },
  },
  already_executed: {
    status: 409,
    summary: 'The call was claimed before',
    detail: 'Tool call tc_1 was already claimed for execution',
    extra: { toolCallStatus: 'executed' },
  },
  not_executed: {
    status: 409,
    summary: 'A result before the claim',
    detail: 'Tool call tc_1 is approved: claim the execution before reporting a result',
    extra: { toolCallStatus: 'approved' },
  },
  already_completed: { status: 409, summary: 'A second result', detail: 'Tool call tc_1 already has a result' },
  unknown_person: {
    status: 400,
    summary: 'The delegate is no person of this tenant',
    detail:
      'No person "bob@example.com" is on record in this tenant: name someone by their id, or by an email that exactly one person with a role has; they must have signed in to Tollgate once',
  },
  ambiguous_person: {
    status: 400,
    summary: 'Several persons have the email named',
    detail: 'Several persons have the email "ops@example.com": name the delegate by their id',
  },
  delegation_to_self: {
    status: 400,
    summary: 'A delegation to yourself',
    detail: 'A delegation names someone else: you cannot delegate to yourself',
  },
  delegate_is_agent: {
    status: 400,
    summary: 'The delegate is an agent',
    detail: '"support-bot" is an agent of this tenant: only a person may decide for you',
  },
  too_many_delegations: {
    status: 409,
    summary: 'The delegate already acts for as many people as one may',
    detail:
      '"bob" already stands in for 20 people (delegations that hold or are to come), the most one person may: choose someone else',
    extra: { limit: 20 },
  },
  no_delegation: {
    status: 404,
    summary: 'You have no delegation that holds now or is to come',
    detail: 'You have no delegation that holds now or is to come',
  },
  payload_too_large: { status: 413, summary: 'A body over 1 MiB', detail: 'request entity too large' },
  output_too_large: {
    status: 413,
    summary: 'A result output over 64 KiB',
    detail: 'output is larger than 64 KiB once serialised',
  },
  unsupported_media_type: {
    status: 415,
    summary: 'A body that is not JSON',
    detail: 'Send JSON (application/json), or YAML (application/yaml) for a policy',
  },
  rate_limited: {
    status: 429,
    summary: 'Too many requests for this token or address',
    detail: 'Too many requests for this token: slow down and retry after the Retry-After seconds',
  },
  waits_limited: {
    status: 429,
    summary: 'Too many open long-polls and streams',
    detail: 'This token already holds 100 open waits; wait for one to answer first',
    extra: { retryAfter: 1 },
  },
  halted: {
    status: 503,
    summary: 'A halt covers the conversation',
    detail: 'Halted (tenant): incident drill',
    extra: { scope: 'tenant' },
  },
  unavailable: {
    status: 503,
    summary: 'The database cannot be reached',
    detail: 'The database is unavailable; nothing was recorded. Retry later.',
    extra: { retryAfter: 2 },
  },
} satisfies Record<string, ExampleSpec>;

/** A code of EXAMPLES whose problem `code` differs from its key (two examples of one code). */
const CODE_OF: Partial<Record<ProblemExample, string>> = {
  grant_forbidden: 'forbidden',
  output_too_large: 'payload_too_large',
  waits_limited: 'rate_limited',
};

export type ProblemExample = keyof typeof EXAMPLES;

/** Response headers a problem of this status carries. */
const HEADERS: Record<number, Record<string, { description: string; schema: Record<string, unknown> }>> = {
  401: { 'WWW-Authenticate': { description: 'Bearer', schema: { type: 'string' } } },
  429: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } },
  503: {
    'Retry-After': {
      description: 'Seconds to wait before retrying (when the database is away)',
      schema: { type: 'integer' },
    },
  },
};

/** The example as the server would answer it (same type, title and member order). */
export function problemExample(key: ProblemExample) {
  const e: ExampleSpec = EXAMPLES[key];
  return problem(e.status, CODE_OF[key] ?? key, e.detail, e.extra);
}

/**
 * The problems an operation can answer, one response per status with an example per code, all
 * `application/problem+json`. Every route also answers 431 and 500 (added to each operation by openapi.ts).
 */
export function ApiProblems(...keys: ProblemExample[]) {
  const byStatus = new Map<number, ProblemExample[]>();
  for (const k of keys) byStatus.set(EXAMPLES[k].status, [...(byStatus.get(EXAMPLES[k].status) ?? []), k]);
  return applyDecorators(
    ApiExtraModels(ProblemView),
    ...[...byStatus].map(([status, ks]) =>
      ApiResponse({
        status,
        description: ks.map((k) => `${EXAMPLES[k].summary} (${CODE_OF[k] ?? k})`).join('; '),
        ...(HEADERS[status] ? { headers: HEADERS[status] } : {}),
        content: {
          [PROBLEM_CONTENT_TYPE]: {
            schema: { $ref: getSchemaPath(ProblemView) },
            examples: Object.fromEntries(
              ks.map((k) => [k, { summary: EXAMPLES[k].summary, value: problemExample(k) }]),
            ),
          },
        },
      }),
    ),
  );
}

/** What every route with a bearer token can answer: no valid token, too many requests, the database away. */
export const BEARER_PROBLEMS: ProblemExample[] = ['unauthenticated', 'rate_limited', 'unavailable'];
/** What every route with a JSON body can answer besides. */
export const BODY_PROBLEMS: ProblemExample[] = ['validation_failed', 'payload_too_large', 'unsupported_media_type'];
