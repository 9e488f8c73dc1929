import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsInt,
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
import type { PolicyDefaults, PolicyRule } from '../../../domain/policy/policy-document';
import { MAX_FINDINGS, type PolicyFinding } from '../../../domain/policy/policy-analysis';
import type { PolicyAnalysis } from '../../../application/queries/get-policy/analyse-policy.query';
import { SUPERVISION_LEVELS, SupervisionLevel } from '../../../domain/policy/supervision-level';
import type {
  PolicyVersionSummaryView,
  policyVersionView,
} from '../../../application/queries/policy-versions/policy-versions.handlers';
import type {
  SimulatedCallView as AppSimulatedCallView,
  SimulationView,
} from '../../../application/queries/simulate-policy/simulate-policy.handler';
import { ID_PATTERN } from './conversation.dto';
import { AnnotationsDto } from './tool-call.dto';
import { POLICY_DOCUMENT_COMPONENT } from '../policy-schema';
import type { Holds, SameMembers } from '../../../application/views/view-guard';

type PolicyVersion = ReturnType<typeof policyVersionView>;
type Transition = SimulationView['summary']['transitions'][number];

const DATE_TIME = { type: 'string', format: 'date-time', example: '2026-01-05T10:00:00.000Z' } as const;
/** The most calls one simulation judges (given or recorded). */
export const MAX_SIMULATED_CALLS = 1000;

@ApiSchema({ name: 'PolicyVersionSummary', description: 'One stored version of the policy, without its document' })
export class PolicyVersionSummaryDto implements PolicyVersionSummaryView {
  @ApiProperty({ type: 'integer', minimum: 1 }) version: number;
  @ApiProperty(DATE_TIME) createdAt: string;
  @ApiProperty({ description: 'Who made it: a `sub`, or policy-file' }) createdBy: string;
  @ApiProperty({ type: 'integer', description: 'How many rules its document has' }) rules: number;
}

@ApiSchema({ name: 'PolicyVersionPage' })
export class PolicyVersionPageDto {
  @ApiProperty({ type: () => [PolicyVersionSummaryDto] }) items: PolicyVersionSummaryDto[];
  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  nextCursor: string | null;
}

@ApiSchema({ name: 'PolicyVersion', description: 'One stored version with its whole document' })
export class PolicyVersionDto implements PolicyVersion {
  @ApiProperty({ type: 'integer', minimum: 1 }) version: number;
  @ApiProperty({ allOf: [{ $ref: '#/components/schemas/PolicyDefaultsInForce' }] }) defaults: PolicyDefaults;
  @ApiProperty({ type: 'array', items: { $ref: '#/components/schemas/PolicyRule' } }) rules: PolicyRule[];
  @ApiProperty(DATE_TIME) createdAt: string;
  @ApiProperty({ description: 'Who made it: a `sub`, or policy-file' }) createdBy: string;
}

export class RollbackPolicyRequest {
  @ApiProperty({ type: 'integer', minimum: 1, description: 'The earlier version whose document becomes a new version' })
  @IsInt({ message: 'must be a whole number' })
  @Min(1)
  @Max(2_147_483_647)
  version: number;
  @ApiPropertyOptional({ maxLength: 4000, description: 'Why (recorded on the PolicyUpdated event)' })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  reason?: string;
}

@ApiSchema({ name: 'SimulatedCallRequest', description: 'A call to judge as if it were proposed now' })
export class SimulatedCallRequestDto {
  @ApiProperty({ pattern: ID_PATTERN.source })
  @IsString()
  @Matches(ID_PATTERN, { message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' })
  toolName: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Any JSON object' })
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
  @ApiPropertyOptional({
    pattern: ID_PATTERN.source,
    description: "Judge it in this conversation: its agent, its user's roles",
  })
  @IsOptional()
  @IsString()
  @Matches(ID_PATTERN, { message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' })
  conversationId?: string;
}

export class SimulatePolicyRequest {
  @ApiProperty({
    allOf: [{ $ref: `#/components/schemas/${POLICY_DOCUMENT_COMPONENT}` }],
    description: 'The candidate policy document, as PUT /v1/policy takes it in JSON',
  })
  @IsObject({ message: 'must be a policy document (a JSON object)' })
  document: Record<string, unknown>;
  @ApiPropertyOptional({
    type: [SimulatedCallRequestDto],
    minItems: 1,
    maxItems: MAX_SIMULATED_CALLS,
    description: 'Judge these calls; leave out to judge the calls recorded since `since` (or the last `days`)',
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_SIMULATED_CALLS)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => SimulatedCallRequestDto)
  calls?: SimulatedCallRequestDto[];
  @ApiPropertyOptional({
    description: 'Recorded calls proposed at or after this ISO 8601 date or date-time',
    example: '2026-01-01',
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  since?: string;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 366,
    description: 'Recorded calls of the last N days (default 7 when neither `since` nor `calls` is given)',
  })
  @IsOptional()
  @IsInt({ message: 'must be a whole number' })
  @Min(1)
  @Max(366)
  days?: number;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_SIMULATED_CALLS,
    default: MAX_SIMULATED_CALLS,
    description: 'At most this many recorded calls, the newest',
  })
  @IsOptional()
  @IsInt({ message: 'must be a whole number' })
  @Min(1)
  @Max(MAX_SIMULATED_CALLS)
  limit?: number;
}

@ApiSchema({
  name: 'SimulationThen',
  description: 'What the call got when proposed (recorded), or what the policy in force gives it now (current)',
})
export class SimulationThenDto implements NonNullable<AppSimulatedCallView['then']> {
  @ApiProperty({ enum: SUPERVISION_LEVELS, enumName: 'SupervisionLevel' }) level: SupervisionLevel;
  @ApiProperty({ type: 'integer', nullable: true }) rule: number | null;
  @ApiProperty({ type: 'integer' }) policyVersion: number;
  @ApiProperty() reason: string;
  @ApiProperty({ enum: ['recorded', 'current'] }) source: 'recorded' | 'current';
}

@ApiSchema({ name: 'SimulationNow', description: 'What the candidate document gives the call' })
export class SimulationNowDto implements NonNullable<AppSimulatedCallView['now']> {
  @ApiProperty({ enum: SUPERVISION_LEVELS, enumName: 'SupervisionLevel' }) level: SupervisionLevel;
  @ApiProperty({ type: 'integer', nullable: true }) rule: number | null;
  @ApiProperty() reason: string;
}

@ApiSchema({ name: 'SimulatedCall' })
export class SimulatedCallDto implements AppSimulatedCallView {
  @ApiPropertyOptional({ description: 'Recorded calls: the tool call' }) toolCallId?: string;
  @ApiPropertyOptional({ ...DATE_TIME, description: 'Recorded calls: when it was proposed' }) proposedAt?: string;
  @ApiPropertyOptional({ type: 'integer', description: "Given calls: the call's index in `calls`" }) index?: number;
  @ApiProperty({ type: 'string', nullable: true }) conversationId: string | null;
  @ApiProperty() toolName: string;
  @ApiProperty({ type: () => SimulationThenDto }) then: SimulationThenDto;
  @ApiProperty({ type: () => SimulationNowDto }) now: SimulationNowDto;
  @ApiProperty({ description: 'The level differs' }) changed: boolean;
}

@ApiSchema({ name: 'SimulationTransition' })
export class SimulationTransitionDto implements Transition {
  @ApiProperty({ enum: SUPERVISION_LEVELS, enumName: 'SupervisionLevel' }) then: SupervisionLevel;
  @ApiProperty({ enum: SUPERVISION_LEVELS, enumName: 'SupervisionLevel' }) now: SupervisionLevel;
  @ApiProperty({ type: 'integer' }) count: number;
}

@ApiSchema({ name: 'SimulationSummary' })
export class SimulationSummaryDto implements NonNullable<SimulationView['summary']> {
  @ApiProperty({ type: 'integer' }) total: number;
  @ApiProperty({ type: 'integer' }) changed: number;
  @ApiProperty({ type: () => [SimulationTransitionDto], description: 'Counts by then → now level' })
  transitions: SimulationTransitionDto[];
}

@ApiSchema({
  name: 'PolicySimulation',
  description: 'What a candidate document would do; nothing was changed or recorded',
})
export class PolicySimulationDto implements SimulationView {
  @ApiProperty({ type: 'integer', description: 'The version in force' }) policyVersion: number;
  @ApiProperty({ enum: ['calls', 'recorded'], description: 'Whether the given calls or the recorded ones were judged' })
  over: 'calls' | 'recorded';
  @ApiProperty({ ...DATE_TIME, nullable: true, description: 'Recorded calls: the start of the window' }) since:
    string | null;
  @ApiProperty({ description: 'More calls were recorded in the window than `limit`: the newest were judged' })
  truncated: boolean;
  @ApiProperty({
    type: () => [SimulatedCallDto],
    description: 'Newest first for recorded calls; in request order for given ones',
  })
  results: SimulatedCallDto[];
  @ApiProperty({ type: () => SimulationSummaryDto }) summary: SimulationSummaryDto;
}

@ApiSchema({ name: 'PolicyFinding', description: 'One thing a rule cannot do as written' })
export class PolicyFindingDto implements PolicyFinding {
  @ApiProperty({
    enum: ['unreachable', 'order'],
    description:
      'unreachable: the rule never decides (rule `by` matches every call it matches and wins them all). order: the rule comes after a laxer rule `by` that matches some of the same calls, and decides those calls anyway (the strictest matching rule decides, not the first)',
  })
  kind: 'unreachable' | 'order';
  @ApiProperty({ type: 'integer', description: 'The rule found' }) rule: number;
  @ApiProperty({ type: 'integer', description: 'The rule that causes it' }) by: number;
  @ApiProperty({
    example:
      'Rule 1 (delete_row, confirm) never decides: rule 0 (delete_*, deny) matches every call it matches and is stricter.',
  })
  message: string;
}

@ApiSchema({
  name: 'PolicyAnalysis',
  description:
    "What the policy's rules can and cannot do, read from the document alone: certain for arguments as written (a shell rule's parts aside); a rule not listed may still never decide for reasons the analysis cannot see",
})
export class PolicyAnalysisDto implements PolicyAnalysis {
  @ApiProperty({ type: 'integer', description: 'The version analysed (the one in force)' }) version: number;
  @ApiProperty({ type: () => [PolicyFindingDto], description: `In rule order; at most ${MAX_FINDINGS}` })
  findings: PolicyFindingDto[];
}

/* Each class and its view name the same members (application/views/view-guard.ts says why). */
export type PolicyLifecycleViewGuards = [
  Holds<SameMembers<PolicyFindingDto, PolicyFinding>>,
  Holds<SameMembers<PolicyAnalysisDto, PolicyAnalysis>>,
  Holds<SameMembers<PolicyVersionSummaryDto, PolicyVersionSummaryView>>,
  Holds<SameMembers<PolicyVersionDto, PolicyVersion>>,
  Holds<SameMembers<PolicySimulationDto, SimulationView>>,
  Holds<SameMembers<SimulatedCallDto, AppSimulatedCallView>>,
  Holds<SameMembers<SimulationThenDto, AppSimulatedCallView['then']>>,
  Holds<SameMembers<SimulationNowDto, AppSimulatedCallView['now']>>,
  Holds<SameMembers<SimulationSummaryDto, SimulationView['summary']>>,
  Holds<SameMembers<SimulationTransitionDto, Transition>>,
];
