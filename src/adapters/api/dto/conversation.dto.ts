import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
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

@ApiSchema({ name: 'ConversationUserInput' })
export class ConversationUserDto {
  @ApiProperty({
    minLength: 1,
    maxLength: 256,
    description: "The end user's id: a person whose token `sub` equals it is the conversation's requester",
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  id: string;
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', maxLength: 128 },
    maxItems: 64,
    description: 'Roles the user holds, for requireRole',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(64)
  @IsString({ each: true })
  @MaxLength(128, { each: true })
  roles?: string[];
  @ApiPropertyOptional({ maxLength: 256 }) @IsOptional() @IsString() @MaxLength(256) name?: string;
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
