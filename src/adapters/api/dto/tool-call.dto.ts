import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { MAX_TIMEOUT_SECONDS } from '../../../domain/policy/policy-document';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import type { EveryMember } from '../../../application/views/view-guard';
import type { ProposedCall } from '../../../domain/conversation/conversation.aggregate';
import { ValidationError, type ValidationFault } from '../../../domain/shared/domain-error';
import { MAX_GRANT_ARGS, MAX_GRANT_SECONDS } from '../../../domain/grant/grant.aggregate';
import { ID_PATTERN } from './conversation.dto';
import { ANY_JSON } from './json-value';
import { StepUpEvidenceDto } from './passkey.dto';
import { PreviewInputDto } from './preview.dto';
import { parsePreview } from '../preview';

/**
 * A proposal's flags, in Tollgate's names or MCP's (`ToolAnnotations`), so an MCP client or gateway can pass a
 * tool's annotations through as they are. `readOnlyHint` means `isReadOnly` and `destructiveHint` `destructive`;
 * `idempotentHint`, `openWorldHint` and `title` are accepted and not read by the policy.
 */
@ApiSchema({ name: 'ToolAnnotations' })
export class AnnotationsDto {
  @ApiPropertyOptional() @IsOptional() @IsBoolean() isReadOnly?: boolean;
  @ApiPropertyOptional() @IsOptional() @IsBoolean() requiresApproval?: boolean;
  @ApiPropertyOptional() @IsOptional() @IsBoolean() destructive?: boolean;
  @ApiPropertyOptional({ description: "MCP's name for isReadOnly" }) @IsOptional() @IsBoolean() readOnlyHint?: boolean;
  @ApiPropertyOptional({ description: "MCP's name for destructive" })
  @IsOptional()
  @IsBoolean()
  destructiveHint?: boolean;
  @ApiPropertyOptional({ description: 'MCP hint; accepted, not read by the policy' })
  @IsOptional()
  @IsBoolean()
  idempotentHint?: boolean;
  @ApiPropertyOptional({ description: 'MCP hint; accepted, not read by the policy' })
  @IsOptional()
  @IsBoolean()
  openWorldHint?: boolean;
  @ApiPropertyOptional({ maxLength: 200, description: 'MCP annotation; accepted, not read by the policy' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  title?: string;
}

/** The three flags the policy reads, from either vocabulary; the two names of one flag must agree. */
export function toolFlagsOf(
  a: AnnotationsDto,
  path: string,
): { isReadOnly?: boolean; requiresApproval?: boolean; destructive?: boolean } {
  const faults: ValidationFault[] = [];
  const either = (ours: keyof AnnotationsDto, mcp: keyof AnnotationsDto): boolean | undefined => {
    const x = a[ours] as boolean | undefined;
    const y = a[mcp] as boolean | undefined;
    if (x !== undefined && y !== undefined && x !== y)
      faults.push({ path: `${path}.${mcp}`, message: `contradicts ${ours}` });
    return x ?? y;
  };
  const flags = {
    isReadOnly: either('isReadOnly', 'readOnlyHint'),
    requiresApproval: a.requiresApproval,
    destructive: either('destructive', 'destructiveHint'),
  };
  if (faults.length) throw new ValidationError(faults);
  return Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined));
}

/** A validated proposal body as the propose command takes it (REST and gRPC alike). */
export function proposedCalls(dto: ProposeToolCallsRequest): ProposedCall[] {
  return dto.toolCalls.map((c, i): EveryMember<ProposedCall> => ({
    externalId: c.id,
    toolName: c.toolName,
    arguments: c.arguments,
    annotations: c.annotations && toolFlagsOf(c.annotations, `toolCalls[${i}].annotations`),
    reason: c.reason,
    confidence: c.confidence,
    estimatedCost: c.estimatedCost,
    display: c.display && JSON.parse(JSON.stringify(c.display)),
    preview: c.preview && parsePreview(c.preview, `toolCalls[${i}].preview`),
    // Sealed by the propose handler from the arguments, never taken from a request.
    sealedArguments: undefined,
  }));
}

@ApiSchema({ name: 'DisplayField' })
export class DisplayFieldDto {
  @ApiProperty({ maxLength: 200 }) @IsString() @MaxLength(200) label: string;
  @ApiProperty({ maxLength: 4000 }) @IsString() @MaxLength(4000) value: string;
}

@ApiSchema({ name: 'Display' })
export class DisplayDto {
  @ApiPropertyOptional({ maxLength: 500 }) @IsOptional() @IsString() @MaxLength(500) title?: string;
  @ApiPropertyOptional({ maxLength: 4000 }) @IsOptional() @IsString() @MaxLength(4000) summary?: string;
  @ApiPropertyOptional({ type: [DisplayFieldDto], maxItems: 50 })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => DisplayFieldDto)
  fields?: DisplayFieldDto[];
}

@ApiSchema({ name: 'ProposedToolCall' })
export class ProposedToolCallDto {
  @ApiPropertyOptional({
    pattern: ID_PATTERN.source,
    description: "The framework's tool-call id; makes the proposal idempotent",
  })
  @IsOptional()
  @IsString()
  @Matches(ID_PATTERN, { message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' })
  id?: string;
  @ApiProperty({ pattern: ID_PATTERN.source })
  @IsString()
  @Matches(ID_PATTERN, { message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' })
  toolName: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Any JSON object, kept exactly as sent' })
  @IsObject({ message: 'must be a JSON object' })
  arguments: Record<string, unknown>;
  @ApiPropertyOptional({
    type: AnnotationsDto,
    description: "The tool's flags, counted only for a tool that is not registered",
  })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => AnnotationsDto)
  annotations?: AnnotationsDto;
  @ApiPropertyOptional({ maxLength: 4000, description: 'Why the agent wants it, shown to people' })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  reason?: string;
  @ApiPropertyOptional({ minimum: 0, maximum: 1 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(1)
  confidence?: number;
  @ApiPropertyOptional({ minimum: 0 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  estimatedCost?: number;
  @ApiPropertyOptional({ type: DisplayDto, description: 'What people are shown' })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => DisplayDto)
  display?: DisplayDto;
  @ApiPropertyOptional({
    type: PreviewInputDto,
    description:
      'What the call will do, as people should see it (diff, sql, email, text, image); shown escaped, and its digest is bound to the decision and the receipt (`preview` claim)',
  })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => PreviewInputDto)
  preview?: PreviewInputDto;
}

export class ResultRequest {
  @ApiProperty({ enum: ['succeeded', 'failed'] }) @IsIn(['succeeded', 'failed']) outcome: 'succeeded' | 'failed';
  @ApiPropertyOptional({ ...ANY_JSON, description: 'Any JSON, at most 64 KiB serialised' })
  @IsOptional()
  output?: unknown;
  @ApiPropertyOptional({ maxLength: 16000 }) @IsOptional() @IsString() @MaxLength(16000) error?: string;
}

/** A result sent with a proposal (`results`): what `POST /v1/tool-calls/{id}/result` takes, with the call's id. */
@ApiSchema({ name: 'CarriedResult' })
export class CarriedResultDto extends ResultRequest {
  @ApiProperty({ example: 'tc_7de0c1', description: 'An earlier call of this conversation, claimed by this agent' })
  @IsString()
  @Matches(ID_PATTERN, { message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' })
  toolCallId: string;
}

export class ProposeToolCallsRequest {
  @ApiProperty({ type: [ProposedToolCallDto], minItems: 1, maxItems: 64 })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(64)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => ProposedToolCallDto)
  toolCalls: ProposedToolCallDto[];
  @ApiPropertyOptional({
    description:
      'Claim at once, in the same transaction, each call of the step that stands approved and unclaimed (approved on the spot by the policy, or a repeated call approved since): the answer holds its claim in `claims`, one round trip for an auto-approved call. Never under a halt. Default false.',
  })
  @IsOptional()
  @IsBoolean()
  claim?: boolean;
  @ApiPropertyOptional({
    pattern: '^[A-Za-z0-9_.:-]{1,128}$',
    description:
      "With `claim`: this request's idempotency key for its claims, new for each request (ignored without `claim`). The same request sent again with the same key (a retry after a lost answer) is answered the claims it made, the same receipts (id, issue and expiry), while their results are not in and the receipts good; a call claimed before is otherwise never claimed again.",
  })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9_.:-]{1,128}$/, { message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' })
  claimKey?: string;
  @ApiPropertyOptional({
    type: [CarriedResultDto],
    maxItems: 64,
    description:
      "Results of earlier calls of this conversation (each as `POST /v1/tool-calls/{id}/result` takes it), recorded before the proposal in the same transaction: an agent's report of its last call rides with its next step, one request and one commit instead of two. All or nothing: a result refused (`not_executed`, `already_completed` with another result, a call of another conversation: `not_found`) refuses the request and nothing of it is written. The same result again is taken as recorded, so the request stays safe to retry.",
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(64)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => CarriedResultDto)
  results?: CarriedResultDto[];
}

export class DecisionRequest {
  @ApiProperty({
    enum: ['approve', 'reject', 'always_allow', 'respond', 'always_reject'],
    description:
      "respond: the call does not run and the agent is told `response` instead (outcome rejected); always_reject: reject and make a standing deny in `scope` (GET /v1/grants?effect=deny). A decision the call's rule does not allow (`approval.allowedDecisions`, `approval.rejectReasons`) is 403 decision_not_allowed",
  })
  @IsIn(['approve', 'reject', 'always_allow', 'respond', 'always_reject'])
  decision: 'approve' | 'reject' | 'always_allow' | 'respond' | 'always_reject';
  @ApiPropertyOptional({
    maxLength: 4000,
    description:
      "respond only (required there): the person's answer, which the agent gives the model as the tool's answer",
  })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  response?: string;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 1000,
    example: 1,
    description:
      'always_allow only: the calls the standing grant may let through (1: single use); without it, any number',
  })
  @IsOptional()
  @IsInt({ message: 'must be a whole number' })
  @Min(1)
  @Max(1000)
  uses?: number;
  @ApiPropertyOptional({ maxLength: 4000, description: "A rejection's reason is what the agent reads" })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  reason?: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'approve only: the arguments to run instead',
  })
  @IsOptional()
  @IsObject({ message: 'must be a JSON object' })
  arguments?: Record<string, unknown>;
  @ApiPropertyOptional({
    enum: ['conversation', 'agent', 'tenant'],
    description: 'always_allow only: where the standing grant applies (default conversation)',
  })
  @IsOptional()
  @IsIn(['conversation', 'agent', 'tenant'])
  scope?: 'conversation' | 'agent' | 'tenant';
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_GRANT_SECONDS,
    example: 86400,
    description: 'always_allow only: seconds the standing grant lives (at most 90 days); without it, until revoked',
  })
  @IsOptional()
  @IsInt({ message: 'must be a whole number of seconds' })
  @Min(1)
  @Max(MAX_GRANT_SECONDS)
  expiresIn?: number;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    maxProperties: MAX_GRANT_ARGS,
    example: { cmd: 'ls *' },
    description:
      "always_allow only: argument name → glob (as in a policy rule's tool(arg=glob)); the grant covers only calls whose arguments all match",
  })
  @IsOptional()
  @IsObject({ message: 'must be a JSON object' })
  args?: Record<string, string>;
  @ApiPropertyOptional({
    type: StepUpEvidenceDto,
    description:
      "An approval of a call whose rule says stepUp: passkey: the passkey assertion answering POST /v1/tool-calls/{id}/step-up's options, made for the same arguments. Without a valid one, 403 step_up_required; made for another call or other arguments, 403 step_up_mismatch",
  })
  @IsOptional()
  @IsObject({ message: 'must be a JSON object' })
  @ValidateNested()
  @Type(() => StepUpEvidenceDto)
  stepUp?: StepUpEvidenceDto;
}

/** POST /v1/tool-calls/{id}/deadline: a later deadline (admins), as a time or as seconds added. */
export class DeadlineRequest {
  @ApiPropertyOptional({
    type: 'string',
    format: 'date-time',
    description:
      "The new deadline: later than the current one, at most 30 days from now (a rule's longest decisionTimeout)",
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'must be an ISO 8601 date-time' })
  expiresAt?: string;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_TIMEOUT_SECONDS,
    description:
      'Seconds added to the current deadline (instead of expiresAt); the new deadline is at most 30 days from now',
  })
  @IsOptional()
  @IsInt({ message: 'must be a whole number of seconds' })
  @Min(1)
  @Max(MAX_TIMEOUT_SECONDS)
  extendBy?: number;
  @ApiPropertyOptional({ maxLength: 4000, description: 'Why (recorded)' })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  reason?: string;
}

/** POST /v1/conversations/{id}/decisions: one decision for every pending call of the step (or the named ones). */
export class StepDecisionRequest {
  @ApiProperty({
    enum: ['approve', 'reject'],
    description: 'always_allow and edited arguments are per call: decide those one by one',
  })
  @IsIn(['approve', 'reject'])
  decision: 'approve' | 'reject';
  @ApiPropertyOptional({ maxLength: 4000, description: 'Recorded on every call it decides' })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  reason?: string;
  @ApiPropertyOptional({
    type: [String],
    maxItems: 64,
    description: 'Only these pending calls of the conversation (default: all of them)',
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(64)
  @IsString({ each: true })
  @MaxLength(128, { each: true })
  toolCallIds?: string[];
}
