import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { HALT_SCOPES, HaltScope } from '../../../domain/halt/halt.aggregate';

export class ResumeRequest {
  @ApiProperty({ enum: HALT_SCOPES }) @IsIn(HALT_SCOPES) scope: HaltScope;
  @ApiPropertyOptional({ description: "the agent's sub or the conversation id; left out for the tenant" }) @IsOptional() @IsString() @MaxLength(256) id?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(4000) reason?: string;
}

/** Not derived from ResumeRequest: class-validator would inherit its optional `reason`. */
export class HaltRequest {
  @ApiProperty({ enum: HALT_SCOPES }) @IsIn(HALT_SCOPES) scope: HaltScope;
  @ApiPropertyOptional({ description: "the agent's sub or the conversation id; left out for the tenant" }) @IsOptional() @IsString() @MaxLength(256) id?: string;
  @ApiProperty() @IsString() @IsNotEmpty() @MaxLength(4000) reason: string;
}
