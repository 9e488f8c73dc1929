import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsNumber, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateNested,
} from 'class-validator';
import { ID_PATTERN } from './conversation.dto';
import { ANY_JSON } from './json-value';

@ApiSchema({ name: 'ToolAnnotations' })
export class AnnotationsDto {
  @ApiPropertyOptional() @IsOptional() @IsBoolean() isReadOnly?: boolean;
  @ApiPropertyOptional() @IsOptional() @IsBoolean() requiresApproval?: boolean;
  @ApiPropertyOptional() @IsOptional() @IsBoolean() destructive?: boolean;
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
  @ApiPropertyOptional({ type: [DisplayFieldDto], maxItems: 50 }) @IsOptional() @IsArray() @ArrayMaxSize(50) @IsObject({ each: true }) @ValidateNested({ each: true }) @Type(() => DisplayFieldDto) fields?: DisplayFieldDto[];
}

@ApiSchema({ name: 'ProposedToolCall' })
export class ProposedToolCallDto {
  @ApiPropertyOptional({ pattern: ID_PATTERN.source, description: "The framework's tool-call id; makes the proposal idempotent" })
  @IsOptional() @IsString() @Matches(ID_PATTERN, { message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' }) id?: string;
  @ApiProperty({ pattern: ID_PATTERN.source }) @IsString() @Matches(ID_PATTERN, { message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' }) toolName: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Any JSON object, kept exactly as sent' }) @IsObject({ message: 'must be a JSON object' }) arguments: Record<string, unknown>;
  @ApiPropertyOptional({ type: AnnotationsDto, description: 'The tool\'s flags, counted only for a tool that is not registered' }) @IsOptional() @IsObject() @ValidateNested() @Type(() => AnnotationsDto) annotations?: AnnotationsDto;
  @ApiPropertyOptional({ maxLength: 4000, description: 'Why the agent wants it, shown to people' }) @IsOptional() @IsString() @MaxLength(4000) reason?: string;
  @ApiPropertyOptional({ minimum: 0, maximum: 1 }) @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(1) confidence?: number;
  @ApiPropertyOptional({ minimum: 0 }) @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) estimatedCost?: number;
  @ApiPropertyOptional({ type: DisplayDto, description: 'What people are shown' }) @IsOptional() @IsObject() @ValidateNested() @Type(() => DisplayDto) display?: DisplayDto;
}

export class ProposeToolCallsRequest {
  @ApiProperty({ type: [ProposedToolCallDto], minItems: 1, maxItems: 64 })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(64) @IsObject({ each: true }) @ValidateNested({ each: true }) @Type(() => ProposedToolCallDto) toolCalls: ProposedToolCallDto[];
}

export class DecisionRequest {
  @ApiProperty({ enum: ['approve', 'reject', 'always_allow'] }) @IsIn(['approve', 'reject', 'always_allow']) decision: 'approve' | 'reject' | 'always_allow';
  @ApiPropertyOptional({ maxLength: 4000, description: "A rejection's reason is what the agent reads" }) @IsOptional() @IsString() @MaxLength(4000) reason?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'approve only: the arguments to run instead' })
  @IsOptional() @IsObject({ message: 'must be a JSON object' }) arguments?: Record<string, unknown>;
  @ApiPropertyOptional({ enum: ['conversation', 'agent', 'tenant'], description: 'always_allow only: where the standing grant applies (default conversation)' }) @IsOptional() @IsIn(['conversation', 'agent', 'tenant']) scope?: 'conversation' | 'agent' | 'tenant';
}

export class ResultRequest {
  @ApiProperty({ enum: ['succeeded', 'failed'] }) @IsIn(['succeeded', 'failed']) outcome: 'succeeded' | 'failed';
  @ApiPropertyOptional({ ...ANY_JSON, description: 'Any JSON, at most 64 KiB serialised' }) @IsOptional() output?: unknown;
  @ApiPropertyOptional({ maxLength: 16000 }) @IsOptional() @IsString() @MaxLength(16000) error?: string;
}

