import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { HALT_SCOPES, HaltScope } from '../../../domain/halt/halt.aggregate';

export class ResumeRequest {
  @ApiProperty({ enum: HALT_SCOPES }) @IsIn(HALT_SCOPES) scope: HaltScope;
  @ApiPropertyOptional({
    description: "the agent's sub or the conversation id; left out for the tenant",
    maxLength: 256,
  })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  id?: string;
  @ApiPropertyOptional({ maxLength: 4000 }) @IsOptional() @IsString() @MaxLength(4000) reason?: string;
}

/** Not derived from ResumeRequest: class-validator would inherit its optional `reason`. */
export class HaltRequest {
  @ApiProperty({ enum: HALT_SCOPES }) @IsIn(HALT_SCOPES) scope: HaltScope;
  @ApiPropertyOptional({
    description: "the agent's sub or the conversation id; left out for the tenant",
    maxLength: 256,
  })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  id?: string;
  @ApiProperty({ minLength: 1, maxLength: 4000 }) @IsString() @IsNotEmpty() @MaxLength(4000) reason: string;
}
