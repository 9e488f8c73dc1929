import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';

export class RegisterToolRequest {
  @ApiPropertyOptional({ maxLength: 4000 }) @IsOptional() @IsString() @MaxLength(4000) description?: string;
  @ApiPropertyOptional({ default: false }) @IsOptional() @IsBoolean() isReadOnly?: boolean;
  @ApiPropertyOptional({ default: false }) @IsOptional() @IsBoolean() requiresApproval?: boolean;
  @ApiPropertyOptional({ default: false }) @IsOptional() @IsBoolean() destructive?: boolean;
  @ApiPropertyOptional({
    type: [String],
    maxItems: 50,
    example: ['password', 'headers.authorization', '*token*'],
    description:
      'Secret arguments, masked as "[redacted:hmac-…]" wherever a call is shown or recorded: dotted paths from the top, or key names (globs with *) at any depth; case-insensitive; each at most 200 characters',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(200, { each: true })
  redact?: string[];
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { type: 'object', properties: { amount: { type: 'number', minimum: 0 } }, required: ['amount'] },
    description:
      "The JSON Schema of the tool's input (draft-07 by default; 2019-09 or 2020-12 by `$schema`), at most 16 KiB, 32 levels deep, 1,000 objects and 64 `$ref`s, with no `$ref` outside itself. For review: people edit the arguments in a form made from it, and an edit that does not conform is refused (400 arguments_invalid); proposals are not checked against it. Its `pattern`, `patternProperties` and `format: regex` are kept but never run on edits. A schema that is not valid: 400 input_schema_invalid. Left out: none.",
  })
  @IsOptional()
  @IsObject({ message: 'must be a JSON object (a JSON Schema)' })
  inputSchema?: Record<string, unknown>;
}
