import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsISO8601, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import type * as app from '../../../application/views/delegation.view';
import type { Holds, SameMembers } from '../../../application/views/view-guard';
import { MAX_DELEGATION_REASON } from '../../../domain/person/delegation';
import { MAX_PERSON_REFERENCE } from '../../../domain/policy/assignee';
import { OnBehalfOfView } from './views.dto';

const DATE_TIME = { type: 'string', format: 'date-time', example: '2026-08-03T07:00:00.000Z' } as const;
/** What a person's id or email may be: printable, without whitespace. */
const PRINTABLE = /^[^\p{C}\p{Z}]+$/u;

/** PUT /v1/me/delegation */
export class SetDelegationRequest {
  @ApiProperty({
    minLength: 1,
    maxLength: MAX_PERSON_REFERENCE,
    example: 'bob@example.com',
    description:
      "Who decides for you while it holds: a person's id (their token's `sub`) in your tenant, or an email exactly one person with a role has (compared case-insensitively). They must have signed in to Tollgate once; not you, not an agent.",
  })
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_PERSON_REFERENCE)
  @Matches(PRINTABLE, { message: 'must be an id or email without whitespace or control characters' })
  to: string;

  @ApiPropertyOptional({
    ...DATE_TIME,
    example: '2026-08-01T07:00:00.000Z',
    description: 'When it starts: now when left out; at most 366 days ahead, never in the past',
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'must be an ISO 8601 date-time' })
  from?: string;

  @ApiProperty({
    ...DATE_TIME,
    description: 'When it ends by itself: after `from`, at most 90 days after it',
  })
  @IsISO8601({ strict: true }, { message: 'must be an ISO 8601 date-time' })
  until: string;

  @ApiPropertyOptional({ maxLength: MAX_DELEGATION_REASON, example: 'Holiday', description: 'Why (recorded)' })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_DELEGATION_REASON)
  reason?: string;
}

@ApiSchema({
  name: 'Delegation',
  description:
    'Your delegation (out of office): while it holds, what would reach you reaches `to`, who decides on your behalf with your rights, never more',
})
export class DelegationView implements app.DelegationView {
  @ApiProperty({ type: () => OnBehalfOfView, description: 'The delegate' }) to: OnBehalfOfView;
  @ApiProperty(DATE_TIME) from: string;
  @ApiProperty({ ...DATE_TIME, description: 'It ends by itself then' }) until: string;
  @ApiPropertyOptional() reason?: string;
  @ApiProperty({ description: 'It holds now (false: it is still to come)' }) active: boolean;
}

@ApiSchema({ name: 'TenantDelegation', description: "One of the tenant's delegations: whose, to whom, when" })
export class TenantDelegationView extends DelegationView implements app.TenantDelegationView {
  @ApiProperty({ type: () => OnBehalfOfView, description: 'Who delegates' }) person: OnBehalfOfView;
}

@ApiSchema({ name: 'DelegationPage' })
export class DelegationPageView implements app.DelegationPageView {
  @ApiProperty({ type: () => [TenantDelegationView] }) items: TenantDelegationView[];
  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  nextCursor: string | null;
}

export type DelegationViewGuards = [
  Holds<SameMembers<DelegationView, app.DelegationView>>,
  Holds<SameMembers<TenantDelegationView, app.TenantDelegationView>>,
  Holds<SameMembers<DelegationPageView, app.DelegationPageView>>,
];
