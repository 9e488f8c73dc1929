import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsNotEmpty, IsObject, IsOptional, IsString, Matches, MaxLength, ValidateNested } from 'class-validator';

export const ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

@ApiSchema({ name: 'ConversationUserInput' })
export class ConversationUserDto {
  @ApiProperty() @IsString() @IsNotEmpty() @MaxLength(256) id: string;
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @ArrayMaxSize(64) @IsString({ each: true }) @MaxLength(128, { each: true }) roles?: string[];
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(256) name?: string;
}

export class StartConversationRequest {
  @ApiPropertyOptional({ pattern: ID_PATTERN.source }) @IsOptional() @IsString() @Matches(ID_PATTERN, { message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' }) id?: string;
  @ApiPropertyOptional({ type: ConversationUserDto }) @IsOptional() @IsObject() @ValidateNested() @Type(() => ConversationUserDto) user?: ConversationUserDto;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(1000) title?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) @IsOptional() @IsObject() metadata?: Record<string, unknown>;
}
