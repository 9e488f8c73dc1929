import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsDefined,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';

/*
 * The Web Push subscription routes' bodies and answers. The body is what the browser's PushSubscription.toJSON()
 * gives, as is (its `expirationTime` included), plus an optional device label.
 */

/** An endpoint URL's longest: push services' are a few hundred characters. */
export const MAX_ENDPOINT = 2048;
export const MAX_USER_AGENT = 300;
/** base64url (RFC 4648 §5), padded or not, as browsers and libraries write it. */
export const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

@ApiSchema({ name: 'PushSubscriptionKeys' })
export class PushSubscriptionKeysDto {
  @ApiProperty({
    description: "The browser's P-256 public key: 65 bytes (uncompressed point), base64url",
    example: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM',
    maxLength: 120,
  })
  @IsString()
  @MaxLength(120)
  @Matches(BASE64URL, { message: 'must be base64url' })
  p256dh: string;

  @ApiProperty({
    description: "The browser's authentication secret: 16 bytes, base64url",
    example: 'tBHItJI5svbpez7KI4CCXg',
    maxLength: 40,
  })
  @IsString()
  @MaxLength(40)
  @Matches(BASE64URL, { message: 'must be base64url' })
  auth: string;
}

/** POST /v1/me/push-subscriptions */
export class CreatePushSubscriptionRequest {
  @ApiProperty({
    description:
      "The push service's URL for this browser (PushSubscription.endpoint): https, resolving to public addresses unless the operator allows private ones (TOLLGATE_WEBHOOK_ALLOW_PRIVATE), where http is taken too",
    maxLength: MAX_ENDPOINT,
    example: 'https://fcm.googleapis.com/fcm/send/dpH5lCsTSSM:APA91bH…',
  })
  @IsString()
  @MaxLength(MAX_ENDPOINT)
  endpoint: string;

  @ApiProperty({ type: PushSubscriptionKeysDto })
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => PushSubscriptionKeysDto)
  keys: PushSubscriptionKeysDto;

  @ApiPropertyOptional({
    type: 'number',
    nullable: true,
    description: 'As the browser gives it (PushSubscription.expirationTime); read, not kept',
  })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  expirationTime?: number | null;

  @ApiPropertyOptional({
    description: 'What the device is, for the list of your devices (navigator.userAgent)',
    maxLength: MAX_USER_AGENT,
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_USER_AGENT)
  userAgent?: string;
}

@ApiSchema({ name: 'PushSubscription' })
export class PushSubscriptionView {
  @ApiProperty({ example: 'ps_3q2Fz1u0bN8Qd7yVx0aK1g' }) id: string;
  @ApiProperty({ description: 'The push service URL', example: 'https://fcm.googleapis.com/fcm/send/dpH5lCsTSSM:…' })
  endpoint: string;
  @ApiProperty({ type: String, nullable: true, description: 'The device label sent with it' })
  userAgent: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When a push service last took a message for it',
  })
  lastSentAt: string | null;
  @ApiProperty({
    type: 'integer',
    description: 'Messages the push service refused or never answered since the last one it took',
  })
  failures: number;
}

@ApiSchema({ name: 'PushSubscriptionList' })
export class PushSubscriptionListView {
  @ApiProperty({ type: [PushSubscriptionView] }) subscriptions: PushSubscriptionView[];
}

@ApiSchema({ name: 'VapidPublicKey' })
export class VapidPublicKeyView {
  @ApiProperty({
    description:
      "The server's VAPID public key (65 bytes, base64url): the applicationServerKey for pushManager.subscribe()",
    example: 'BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U',
  })
  publicKey: string;
}
