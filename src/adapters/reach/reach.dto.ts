import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { CADENCES } from './preferences';

@ApiSchema({ name: 'QuietHours' })
export class QuietHoursDto {
  @ApiProperty({ example: '22:00', pattern: '^([01]\\d|2[0-3]):[0-5]\\d$', description: 'Start, HH:MM local time' })
  from: string;

  @ApiProperty({
    example: '07:00',
    pattern: '^([01]\\d|2[0-3]):[0-5]\\d$',
    description: 'End, HH:MM (may be the next day)',
  })
  to: string;
}

/** GET and PUT /v1/me/notifications (PUT takes any of the fields; the others stay as they were). */
@ApiSchema({ name: 'NotificationPreferences' })
export class NotificationPreferencesDto {
  @ApiProperty({
    enum: CADENCES,
    description:
      'Email (when the server sends email): a message per held call, an hourly or daily digest of what waits, or none',
    example: 'immediate',
  })
  email: string;

  @ApiProperty({
    enum: CADENCES,
    description: 'Web Push to the browsers and phones the person subscribed',
    example: 'immediate',
  })
  push: string;

  @ApiProperty({
    enum: CADENCES,
    description:
      "Direct messages from the Slack app to the person's linked Slack user (the channel message is not affected)",
    example: 'off',
  })
  slack: string;

  @ApiProperty({ example: '09:00', description: 'When the daily digest goes out, HH:MM in `timeZone`' })
  dailyAt: string;

  @ApiProperty({ example: 'Europe/Berlin', description: 'An IANA time zone' })
  timeZone: string;

  @ApiPropertyOptional({
    type: QuietHoursDto,
    nullable: true,
    description: 'Nothing is sent between `from` and `to`; what would have been comes in one digest at `to`',
  })
  quietHours: QuietHoursDto | null;
}
