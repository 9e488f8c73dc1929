import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';

export class PurgeAuditRequest {
  @ApiProperty({
    description: 'ISO 8601 date or date-time; events before it are purged. At least six months ago.',
    example: '2024-01-01T00:00:00Z',
  })
  @IsString()
  @IsNotEmpty()
  before: string;
  @ApiProperty({ minLength: 1, maxLength: 4000 }) @IsString() @IsNotEmpty() @MaxLength(4000) reason: string;
}
