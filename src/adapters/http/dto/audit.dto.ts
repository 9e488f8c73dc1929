import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';

export class PurgeAuditRequest {
  @ApiProperty({ description: 'ISO date-time; events before it are purged. At least six months ago.' }) @IsString() @IsNotEmpty() before: string;
  @ApiProperty() @IsString() @IsNotEmpty() @MaxLength(4000) reason: string;
}
