import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import {
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
  ValidateBy,
  ValidationOptions,
} from 'class-validator';

/*
 * The passkey routes' bodies and answers. WebAuthn's own JSON (the browser's RegistrationResponseJSON and
 * AuthenticationResponseJSON, the options for navigator.credentials) passes through as objects: here only their
 * kind and size are checked; the infrastructure checks every field before @simplewebauthn/server reads it.
 */

/** Serialised bytes an assertion may take (a few hundred in practice). */
export const MAX_ASSERTION_JSON = 16 * 1024;
/** Serialised bytes a registration may take (an attestation with a certificate chain is a few KiB). */
export const MAX_REGISTRATION_JSON = 96 * 1024;

/** A JSON object of at most `max` bytes serialised. */
export function IsWebAuthnJson(max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isWebAuthnJson',
      validator: {
        validate: (v: unknown) =>
          typeof v === 'object' &&
          v !== null &&
          !Array.isArray(v) &&
          Buffer.byteLength(JSON.stringify(v), 'utf8') <= max,
        defaultMessage: () => `must be a JSON object of at most ${max} bytes`,
      },
    },
    options,
  );
}

const ASSERTION_SCHEMA = {
  type: 'object',
  additionalProperties: true,
  description:
    "The AuthenticationResponseJSON the browser's navigator.credentials.get() gave (@simplewebauthn/browser startAuthentication), as is",
} as const;

/** A decision's step-up: the passkey assertion made for this call and the arguments approved. */
@ApiSchema({ name: 'StepUpEvidence' })
export class StepUpEvidenceDto {
  @ApiProperty(ASSERTION_SCHEMA)
  @IsWebAuthnJson(MAX_ASSERTION_JSON)
  passkey: Record<string, unknown>;
}

/** POST /v1/tool-calls/{id}/step-up */
export class StepUpRequest {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      "The edited arguments the approval will carry; absent: the call's own (or, in a quorum, those the first approval fixed)",
  })
  @IsOptional()
  @IsObject({ message: 'must be a JSON object' })
  arguments?: Record<string, unknown>;
}

/** POST /v1/me/passkeys */
export class RegisterPasskeyRequest {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      "The RegistrationResponseJSON the browser's navigator.credentials.create() gave (@simplewebauthn/browser startRegistration), as is",
  })
  @IsWebAuthnJson(MAX_REGISTRATION_JSON)
  response: Record<string, unknown>;

  @ApiPropertyOptional({ minLength: 1, maxLength: 100, example: 'Work laptop', description: 'What to call it' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  name?: string;

  @ApiPropertyOptional({
    ...ASSERTION_SCHEMA,
    description:
      'Needed when you hold passkeys already: an assertion with one of them, answering the options `assertion` of POST /v1/me/passkeys/options',
  })
  @IsOptional()
  @IsWebAuthnJson(MAX_ASSERTION_JSON)
  assertion?: Record<string, unknown>;
}

/** POST /v1/me/passkeys/assertion-options (the body may be left out). */
export class AssertionOptionsRequest {
  @ApiPropertyOptional({
    enum: ['remove', 'revoke'],
    description:
      "The change the assertion will authorise, and nothing else: `remove` (default) one of your passkeys; `revoke`, an admin's removal of another person's (DELETE /v1/people/{personId}/passkeys/{id})",
  })
  @IsOptional()
  @IsIn(['remove', 'revoke'])
  purpose?: 'remove' | 'revoke';
}

/** DELETE /v1/me/passkeys/{id} */
export class RemovePasskeyRequest {
  @ApiProperty({
    ...ASSERTION_SCHEMA,
    description:
      'An assertion with one of your passkeys, answering POST /v1/me/passkeys/assertion-options (the one removed may make it)',
  })
  @IsWebAuthnJson(MAX_ASSERTION_JSON)
  assertion: Record<string, unknown>;
}

@ApiSchema({ name: 'Passkey' })
export class PasskeyView {
  @ApiProperty({ description: "The credential id (base64url): the passkey's id", example: 'hV3x0Q2lWq8' }) id: string;
  @ApiProperty({ example: 'Work laptop' }) name: string;
  @ApiProperty({
    description: "The authenticator model's AAGUID (all zeros when it does not say)",
    example: '00000000-0000-0000-0000-000000000000',
  })
  aaguid: string;
  @ApiProperty({ description: 'Synced between devices by its provider, as the authenticator said at registration' })
  backedUp: boolean;
  @ApiProperty({ type: 'string', format: 'date-time' }) createdAt: string;
  @ApiPropertyOptional({ type: 'string', format: 'date-time', description: 'Its last verified assertion' })
  lastUsedAt?: string;
}

@ApiSchema({ name: 'PasskeyList' })
export class PasskeyListView {
  @ApiProperty({ type: [PasskeyView] }) passkeys: PasskeyView[];
}

const OPTIONS_SCHEMA = (what: string) =>
  ({
    type: 'object',
    additionalProperties: true,
    description: `${what}: give it to @simplewebauthn/browser as { optionsJSON }. Its challenge answers once, within 5 minutes`,
  }) as const;

@ApiSchema({ name: 'PasskeyAssertionOptions' })
export class AssertionOptionsView {
  @ApiProperty(OPTIONS_SCHEMA('PublicKeyCredentialRequestOptionsJSON, for startAuthentication'))
  publicKey: Record<string, unknown>;
}

@ApiSchema({ name: 'PasskeyRegistrationOptions' })
export class RegistrationOptionsView {
  @ApiProperty(OPTIONS_SCHEMA('PublicKeyCredentialCreationOptionsJSON, for startRegistration'))
  publicKey: Record<string, unknown>;
  @ApiPropertyOptional({
    type: AssertionOptionsView,
    description:
      'When you hold passkeys already: the options for the assertion with one of them that adding another needs',
  })
  assertion?: AssertionOptionsView;
}

@ApiSchema({ name: 'StepUpOptions' })
export class StepUpOptionsView {
  @ApiProperty(
    OPTIONS_SCHEMA(
      'PublicKeyCredentialRequestOptionsJSON, for startAuthentication; user verification required, the challenge derived from the call and the arguments (docs/AUTH.md)',
    ),
  )
  publicKey: Record<string, unknown>;
  @ApiProperty({ example: 'tc_7de0c1' }) toolCallId: string;
  @ApiProperty({
    description: 'SHA-256 hex of the RFC 8785 form of the arguments the approval will approve (as a receipt `args`)',
    example: '9f2c…',
  })
  argumentsDigest: string;
}
