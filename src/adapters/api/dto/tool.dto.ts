import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';

export class RegisterToolRequest {
  @ApiPropertyOptional({ maxLength: 4000 }) @IsOptional() @IsString() @MaxLength(4000) description?: string;
  @ApiPropertyOptional({ default: false }) @IsOptional() @IsBoolean() isReadOnly?: boolean;
  @ApiPropertyOptional({ default: false }) @IsOptional() @IsBoolean() requiresApproval?: boolean;
  @ApiPropertyOptional({ default: false }) @IsOptional() @IsBoolean() destructive?: boolean;
}
