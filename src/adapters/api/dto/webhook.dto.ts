import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  MaxLength,
} from 'class-validator';
import { EVENT_TYPES } from '../../../domain/shared/domain-event';

export const WEBHOOK_EVENT_TYPES = [...EVENT_TYPES, '*'] as const;

export class CreateWebhookRequest {
  @ApiProperty({
    description:
      'http(s) URL the events are POSTed to, without credentials; it must resolve to public addresses unless the operator allows private ones (TOLLGATE_WEBHOOK_ALLOW_PRIVATE)',
    maxLength: 2048,
  })
  @IsString()
  @MaxLength(2048)
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
    { message: 'url must be an http(s) URL' },
  )
  url: string;

  @ApiProperty({ description: 'audit event types to send; "*" for all', enum: WEBHOOK_EVENT_TYPES, isArray: true })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length)
  @IsIn(WEBHOOK_EVENT_TYPES, { each: true })
  events: string[];

  @ApiPropertyOptional({
    description:
      'a Standard Webhooks secret (whsec_ + base64 of 24 to 64 bytes); made for you when left out, and shown only in this answer',
    pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
  })
  @IsOptional()
  @IsString()
  @Matches(/^whsec_[A-Za-z0-9+/]+={0,2}$/, { message: 'secret must be whsec_ followed by base64' })
  secret?: string;

  @ApiPropertyOptional({ maxLength: 500 }) @IsOptional() @IsString() @MaxLength(500) description?: string;
}
