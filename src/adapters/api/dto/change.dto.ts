import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import type { PendingChangeView as AppPendingChangeView } from '../../../application/views/change.view';
import type { Holds, SameMembers } from '../../../application/views/view-guard';
import { CHANGE_KINDS, CHANGE_STATUSES } from '../../../domain/governance/pending-change.aggregate';
import type { ChangeKind, ChangeStatus } from '../../../domain/governance/pending-change.aggregate';

const DATE_TIME = { type: 'string', format: 'date-time', example: '2026-01-05T10:00:00.000Z' } as const;

@ApiSchema({ name: 'ChangePerson', description: 'A person as a pending change records them' })
export class ChangePersonView {
  @ApiProperty({ example: 'ann' }) id: string;
  @ApiPropertyOptional({ example: 'Ann' }) name?: string;
}

@ApiSchema({ name: 'ChangeApproval' })
export class ChangeApprovalView {
  @ApiProperty({ type: () => ChangePersonView }) by: ChangePersonView;
  @ApiProperty(DATE_TIME) at: string;
}

@ApiSchema({
  name: 'PendingChange',
  description:
    'A change of the control plane held for more admins (`governance: {quorum}` in the policy): a policy update or rollback, a resume, a new webhook or a tenant-wide grant',
})
export class PendingChangeView implements AppPendingChangeView {
  @ApiProperty({ example: 'chg_5b1e' }) id: string;
  @ApiProperty({ enum: CHANGE_KINDS, enumName: 'ChangeKind' }) kind: ChangeKind;
  @ApiProperty({ example: 'Replace policy version 3 with a document of 4 rules' }) summary: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'What will be applied: `{document, source?}` (policy_update), `{version, reason?}` (policy_rollback), `{scope, id, reason?, via}` (resume), `{url, events, description}` (webhook_create; never its secret), `{toolName, scope, conversationId, agentId, toolCallId, expiresIn?, args?}` (tenant_grant)',
  })
  payload: Record<string, unknown>;
  @ApiProperty({
    example: 'a3f1…',
    description: 'SHA-256 (hex) of the RFC 8785 form of `payload`, as recorded in ChangeProposed',
  })
  payloadDigest: string;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Policy changes: the version they were made against; they apply only while it is in force',
  })
  baseVersion: number | null;
  @ApiProperty({ type: () => ChangePersonView }) proposedBy: ChangePersonView;
  @ApiProperty({ type: () => [ChangeApprovalView], description: 'Distinct admins who approved, the proposer first' })
  approvals: ChangeApprovalView[];
  @ApiProperty({ example: 2, description: 'Distinct admins needed, the proposer included' }) needed: number;
  @ApiProperty({ enum: CHANGE_STATUSES, enumName: 'ChangeStatus' }) status: ChangeStatus;
  @ApiProperty(DATE_TIME) createdAt: string;
  @ApiProperty({ ...DATE_TIME, description: 'Seven days after it was proposed' }) expiresAt: string;
  @ApiProperty({ ...DATE_TIME, type: 'string', nullable: true }) closedAt: string | null;
  @ApiProperty({ type: () => ChangePersonView, nullable: true }) rejectedBy: ChangePersonView | null;
  @ApiProperty({ type: 'string', nullable: true }) reason: string | null;
}

@ApiSchema({ name: 'PendingChangePage' })
export class PendingChangePageView {
  @ApiProperty({ type: () => [PendingChangeView] }) items: PendingChangeView[];
  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  nextCursor: string | null;
}

@ApiSchema({
  name: 'HeldForApproval',
  description: 'The answer (202) of a governed request that waits for more admins instead of taking effect',
})
export class HeldForApprovalView {
  @ApiProperty({ type: () => PendingChangeView }) pendingChange: PendingChangeView;
  @ApiPropertyOptional({
    example: 'whsec_…',
    description: 'A held new webhook only: its signing secret, shown in this answer only',
  })
  secret?: string;
}

@ApiSchema({ name: 'ApproveChangeResult' })
export class ApproveChangeResultView {
  @ApiProperty({ type: () => PendingChangeView }) change: PendingChangeView;
  @ApiProperty({ description: 'True when this approval reached the quorum and the change took effect' })
  applied: boolean;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      "Once applied: the original request's answer (the policy in force, the resume, the webhook without its secret, the grant)",
  })
  result?: unknown;
}

export class RejectChangeRequest {
  @ApiPropertyOptional({ maxLength: 1000, description: 'Why; recorded in the audit trail (ChangeRejected)' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  reason?: string;
}

/* Compile-time guard: the class here and the application's view name the same members. */
export type PendingChangeViewGuard = Holds<SameMembers<PendingChangeView, AppPendingChangeView>>;
