import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import type { GrantView as AppGrantView } from '../../../application/queries/list-grants/grant.view';
import { CHANNELS } from '../../../domain/shared/actor';
import type { Holds, SameMembers } from '../../../application/views/view-guard';

const DATE_TIME = { type: 'string', format: 'date-time', example: '2026-01-05T10:00:00.000Z' } as const;

@ApiSchema({ name: 'GrantActor', description: 'Who made or revoked a grant, and through which channel' })
export class GrantActorView implements NonNullable<AppGrantView['createdBy']> {
  @ApiProperty({ example: 'ann' }) id: string;
  @ApiPropertyOptional({ example: 'Ann' }) name?: string;
  @ApiProperty({ enum: CHANNELS, enumName: 'Channel' }) via: string;
}

@ApiSchema({
  name: 'Grant',
  description: 'A standing grant: an always_allow that turns confirm into automatic for its tool in its scope',
})
export class GrantView implements AppGrantView {
  @ApiProperty({ example: 'grant_0f3a' }) id: string;
  @ApiProperty({ example: 'shell' }) toolName: string;
  @ApiProperty({ enum: ['conversation', 'agent', 'tenant'] }) scope: 'conversation' | 'agent' | 'tenant';
  @ApiProperty({ type: 'string', nullable: true, description: 'scope conversation only' }) conversationId:
    string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'scope agent only' }) agentId: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    nullable: true,
    example: { cmd: 'ls *' },
    description: 'Argument name → glob; null: any arguments',
  })
  args: Record<string, string> | null;
  @ApiProperty({ example: 'shell(cmd=ls *)', description: 'What the grant covers, written as a policy pattern' })
  pattern: string;
  @ApiProperty({
    enum: ['active', 'revoked', 'expired', 'spent'],
    description: 'spent: a limited grant (uses) that has let all its calls through',
  })
  status: 'active' | 'revoked' | 'expired' | 'spent';
  @ApiProperty({ type: () => GrantActorView }) createdBy: GrantActorView;
  @ApiProperty(DATE_TIME) createdAt: string;
  @ApiProperty({
    ...DATE_TIME,
    type: 'string',
    nullable: true,
    description: 'After this the grant no longer applies; null: until revoked',
  })
  expiresAt: string | null;
  @ApiProperty({ ...DATE_TIME, type: 'string', nullable: true }) revokedAt: string | null;
  @ApiProperty({ type: () => GrantActorView, nullable: true }) revokedBy: GrantActorView | null;
  @ApiProperty({ type: 'string', nullable: true }) revokeReason: string | null;
  @ApiProperty({ example: 'tc_7de0c1', description: 'The tool call whose always_allow made the grant' })
  sourceToolCallId: string;
  @ApiProperty({
    enum: ['allow', 'deny'],
    description:
      'allow: a grant (an always_allow: matching confirm calls run without a person); deny: a standing deny (an always_reject: matching calls are denied at proposal)',
  })
  effect: 'allow' | 'deny';
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 1,
    description: 'A limited grant: the calls it may let through; null: any number',
  })
  uses: number | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 0,
    description: 'The calls it may still let through (0: spent); null: any number',
  })
  usesLeft: number | null;
}

@ApiSchema({ name: 'GrantPage' })
export class GrantPageView {
  @ApiProperty({ type: () => [GrantView] }) items: GrantView[];
  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  nextCursor: string | null;
}

@ApiSchema({ name: 'RevokeGrantRequest' })
export class RevokeGrantRequest {
  @ApiPropertyOptional({ maxLength: 1000, description: 'Why; recorded in the audit trail (GrantRevoked)' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  reason?: string;
}

/* Compile-time guard: the class here and the application's view name the same members. */
export type GrantViewGuard = Holds<SameMembers<GrantView, AppGrantView>>;
