import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { MAX_USER_TOKEN_LENGTH } from '../../../application/ports/user-token.port';
import {
  ArrayMaxSize,
  IsArray,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';

export const ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

@ApiSchema({
  name: 'ConversationUserInput',
  description:
    "The end user: `id` (with `roles` and `name`) as the agent names them, recorded as asserted; or `token`, the user's own identity provider token, which Tollgate verifies and takes the id, roles and name from (recorded as verified). One of id and token is required",
})
export class ConversationUserDto {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 256,
    description:
      "The end user's id: a person whose token `sub` equals it is the conversation's requester. Required without `token`; with it, it must be the token's `sub`",
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  id?: string;
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: MAX_USER_TOKEN_LENGTH,
    description:
      "The end user's own token from the identity provider (a JWT), issued to the agent's application (an audience in TOLLGATE_USER_TOKEN_AUDIENCE), never one Tollgate accepts as a bearer token. Verified with the keys of people's tokens; the user's id, roles and name come from it. Never stored, logged or shown",
  })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_USER_TOKEN_LENGTH)
  token?: string;
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', maxLength: 128 },
    maxItems: 64,
    description: 'Roles the user holds, for requireRole (not with `token`: they come from it)',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(64)
  @IsString({ each: true })
  @MaxLength(128, { each: true })
  roles?: string[];
  @ApiPropertyOptional({ maxLength: 256, description: 'Not with `token`: the name comes from it' })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  name?: string;
}

export class StartConversationRequest {
  @ApiPropertyOptional({
    pattern: ID_PATTERN.source,
    description:
      'Made by the server when left out; the same id again from the same agent answers the conversation as it is',
  })
  @IsOptional()
  @IsString()
  @Matches(ID_PATTERN, { message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' })
  id?: string;
  @ApiPropertyOptional({ type: ConversationUserDto })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ConversationUserDto)
  user?: ConversationUserDto;
  @ApiPropertyOptional({ maxLength: 1000 }) @IsOptional() @IsString() @MaxLength(1000) title?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Any JSON object, kept as sent' })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown>;
}
