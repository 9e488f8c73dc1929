import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsObject, IsOptional, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import {
  MAX_PREVIEW_HEADER,
  MAX_PREVIEW_TITLE,
  PREVIEW_KINDS,
  type PreviewKind,
} from '../../../domain/conversation/call-preview';

/** The longest `content` the shape allows: an image's data URL (256 KiB of base64 and its prefix). */
export const MAX_PREVIEW_CONTENT = 360_000;

@ApiSchema({ name: 'PreviewEmail', description: "An email preview's headers; its content is the body, as text" })
export class PreviewEmailDto {
  @ApiPropertyOptional({ maxLength: MAX_PREVIEW_HEADER })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_PREVIEW_HEADER)
  from?: string;
  @ApiPropertyOptional({ maxLength: MAX_PREVIEW_HEADER })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_PREVIEW_HEADER)
  to?: string;
  @ApiPropertyOptional({ maxLength: MAX_PREVIEW_HEADER })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_PREVIEW_HEADER)
  cc?: string;
  @ApiPropertyOptional({ maxLength: MAX_PREVIEW_HEADER })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_PREVIEW_HEADER)
  subject?: string;
}

@ApiSchema({
  name: 'PreviewInput',
  description:
    'What the call will do, as a person should see it: a unified diff, an SQL statement, an email, plain text, or an image (a data: URL of PNG, JPEG or WebP). Agent-supplied: every channel shows it escaped. Its digest is bound to the decision and the receipt (`preview` claim).',
})
export class PreviewInputDto {
  @ApiProperty({ enum: PREVIEW_KINDS, enumName: 'PreviewKind' })
  @IsIn(PREVIEW_KINDS)
  kind: PreviewKind;
  @ApiProperty({
    maxLength: MAX_PREVIEW_CONTENT,
    description:
      'The text (at most 64 KiB: 65,536 UTF-16 code units), or for `image` a data: URL (data:image/png|jpeg|webp;base64,…) of at most 256 KiB decoded. Never fetched from anywhere.',
  })
  @IsString()
  @MaxLength(MAX_PREVIEW_CONTENT)
  content: string;
  @ApiPropertyOptional({ maxLength: MAX_PREVIEW_TITLE })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_PREVIEW_TITLE)
  title?: string;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description: '`sql` only: the rows the statement is expected to touch',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  estimatedRows?: number;
  @ApiPropertyOptional({ type: PreviewEmailDto, description: '`email` only' })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => PreviewEmailDto)
  email?: PreviewEmailDto;
}
