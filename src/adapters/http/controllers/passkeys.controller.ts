import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import {
  ListPasskeysQuery,
  PasskeyAssertionOptionsCommand,
  PasskeyRegistrationOptionsCommand,
  RegisterPasskeyCommand,
  RemovePasskeyCommand,
  ListPersonPasskeysQuery,
  RevokePersonPasskeyCommand,
} from '../../../application/commands/passkeys/passkey.commands';
import type { PasskeySummary } from '../../../application/ports/passkey.port';
import { PasskeyNotFoundError } from '../../../domain/person/passkey.errors';
import { isAgent, Principal } from '../../../domain/shared/actor';
import {
  AssertionOptionsView,
  PasskeyListView,
  PasskeyView,
  RegisterPasskeyRequest,
  RegistrationOptionsView,
  RemovePasskeyRequest,
  AssertionOptionsRequest,
} from '../../api/dto/passkey.dto';
import { ApiProblems, BEARER_PROBLEMS, BODY_PROBLEMS } from '../../api/dto/problem.dto';
import { ApiChannelHeader } from '../../api/dto/api-params';
import { ForbiddenError } from '../../api/errors';
import { channelHeader } from '../../api/request-params';
import { parseBody } from '../../api/validation';
import { CurrentPrincipal, Roles } from '../auth';

/** A credential id as a path segment: base64url, at most 1023 bytes of id. Anything else is no passkey of anyone's. */
const CREDENTIAL_ID = /^[A-Za-z0-9_-]{1,1366}$/;

/** 403 before any body is read: passkeys are people's. */
function person(p: Principal): Principal {
  if (isAgent(p)) throw new ForbiddenError('Agent tokens have no passkeys: passkeys belong to people');
  return p;
}

function view(k: PasskeySummary): PasskeyView {
  return {
    id: k.id,
    name: k.name,
    aaguid: k.aaguid,
    backedUp: k.backedUp,
    createdAt: k.createdAt.toISOString(),
    ...(k.lastUsedAt ? { lastUsedAt: k.lastUsedAt.toISOString() } : {}),
  };
}

/**
 * The caller's passkeys, for approvals whose rule says `stepUp: passkey` (the web inbox's Passkeys page). People
 * only. Adding a passkey when one is held, and removing one, need an assertion with a passkey held.
 */
@ApiTags('identity')
@ApiBearerAuth()
@Controller('v1/me/passkeys')
export class PasskeysController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'listPasskeys',
    summary: 'List your passkeys',
    description: 'People only. Never their public keys.',
  })
  @ApiOkResponse({ type: PasskeyListView })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden')
  async list(@CurrentPrincipal() p: Principal): Promise<PasskeyListView> {
    const passkeys: PasskeySummary[] = await this.queries.execute(new ListPasskeysQuery(person(p)));
    return { passkeys: passkeys.map(view) };
  }

  @Post('options')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'passkeyRegistrationOptions',
    summary: 'Options to register a passkey',
    description:
      'People only, no body. The options for navigator.credentials.create() (@simplewebauthn/browser startRegistration), user verification required; when you hold passkeys already, also `assertion`: the options for the assertion with one of them that adding another needs. Each challenge answers once, within 5 minutes.',
  })
  @ApiOkResponse({ type: RegistrationOptionsView })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden')
  options(@CurrentPrincipal() p: Principal) {
    return this.commands.execute(new PasskeyRegistrationOptionsCommand(person(p)));
  }

  @Post()
  @ApiOperation({
    operationId: 'registerPasskey',
    summary: 'Register a passkey',
    description:
      'People only. The registration answering POST /v1/me/passkeys/options; when you hold passkeys already, with `assertion` made with one of them (else 403 step_up_required). A registration that does not verify (another origin, no user verification, a used or expired challenge) answers 400 passkey_invalid. Recorded in the audit trail as PasskeyRegistered, with the public key.',
  })
  @ApiChannelHeader()
  @ApiBody({ type: RegisterPasskeyRequest })
  @ApiCreatedResponse({ type: PasskeyView })
  @ApiProblems(
    ...BEARER_PROBLEMS,
    ...BODY_PROBLEMS,
    'passkey_invalid',
    'forbidden',
    'step_up_required',
    'too_many_passkeys',
  )
  async register(
    @CurrentPrincipal() p: Principal,
    @Body() body: unknown,
    @Headers('x-tollgate-channel') channel?: string,
  ): Promise<PasskeyView> {
    person(p);
    const dto = parseBody(RegisterPasskeyRequest, body);
    const via = channelHeader(channel);
    const registered: PasskeySummary = await this.commands.execute(
      new RegisterPasskeyCommand(
        { ...p, via },
        { response: dto.response, name: dto.name, ...(dto.assertion ? { assertion: dto.assertion } : {}) },
      ),
    );
    return view(registered);
  }

  @Post('assertion-options')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'passkeyAssertionOptions',
    summary: 'Options for an assertion with one of your passkeys',
    description:
      "People only; the body may be left out. What removing a passkey needs (`purpose: remove`, the default), or an admin's removal of another person's (`purpose: revoke`): the options for navigator.credentials.get() (@simplewebauthn/browser startAuthentication), answering once within 5 minutes, for that change only.",
  })
  @ApiBody({ type: AssertionOptionsRequest, required: false })
  @ApiOkResponse({ type: AssertionOptionsView })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden')
  assertionOptions(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    person(p);
    const dto = parseBody(AssertionOptionsRequest, body ?? {});
    return this.commands.execute(new PasskeyAssertionOptionsCommand(p, dto.purpose ?? 'remove'));
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'removePasskey',
    summary: 'Remove one of your passkeys',
    description:
      'People only. With an assertion made with one of your passkeys (POST /v1/me/passkeys/assertion-options); without a valid one, 403 step_up_required. Recorded in the audit trail as PasskeyRemoved.',
  })
  @ApiParam({ name: 'id', description: "The passkey's credential id (base64url)", type: 'string' })
  @ApiChannelHeader()
  @ApiBody({ type: RemovePasskeyRequest })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden', 'step_up_required', 'not_found')
  async remove(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('x-tollgate-channel') channel?: string,
  ): Promise<void> {
    person(p);
    if (!CREDENTIAL_ID.test(id)) throw new PasskeyNotFoundError();
    const dto = parseBody(RemovePasskeyRequest, body);
    await this.commands.execute(new RemovePasskeyCommand({ ...p, via: channelHeader(channel) }, id, dto.assertion));
  }
}

/** A person's id as a path segment: what a token's `sub` may be (bounded, printable). */
const PERSON_ID = /^[\x21-\x7e]{1,256}$/;

/**
 * Admins' recovery for a lost device: see a person's passkeys and remove one without an assertion. Never their
 * own (those need an assertion with one of them, under /v1/me/passkeys), and only in their own tenant.
 */
@ApiTags('identity')
@ApiBearerAuth()
@Controller('v1/people/:personId/passkeys')
export class PersonPasskeysController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get()
  @Roles('admin')
  @ApiOperation({
    operationId: 'listPersonPasskeys',
    summary: "List a person's passkeys (admins)",
    description: "Admins. A person's passkeys in the admin's tenant, to find the one a lost device held.",
  })
  @ApiParam({ name: 'personId', description: "The person's id (their token's or provider's sub)", type: 'string' })
  @ApiOkResponse({ type: PasskeyListView })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden')
  async list(@CurrentPrincipal() p: Principal, @Param('personId') personId: string): Promise<PasskeyListView> {
    // No token's `sub` looks like this: no one here, as an unknown person is.
    if (!PERSON_ID.test(personId)) return { passkeys: [] };
    const passkeys: PasskeySummary[] = await this.queries.execute(new ListPersonPasskeysQuery(p, personId));
    return { passkeys: passkeys.map(view) };
  }

  @Delete(':id')
  @Roles('admin')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'revokePersonPasskey',
    summary: "Remove a person's lost passkey (admins)",
    description:
      "Admins, for another person (your own: DELETE /v1/me/passkeys/{id}; 403 here). With an assertion made with one of YOUR passkeys for this change (POST /v1/me/passkeys/assertion-options with purpose revoke), else 403 step_up_required: a stolen admin session alone must not clear someone's passkeys. Recorded in the audit trail as PasskeyRemoved with you as removedBy. The person can then register a new passkey with their sign-in alone.",
  })
  @ApiParam({ name: 'personId', description: "The person's id", type: 'string' })
  @ApiParam({ name: 'id', description: "The passkey's credential id (base64url)", type: 'string' })
  @ApiChannelHeader()
  @ApiBody({ type: RemovePasskeyRequest })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden', 'step_up_required', 'not_found')
  async revoke(
    @CurrentPrincipal() p: Principal,
    @Param('personId') personId: string,
    @Param('id') id: string,
    @Body() body: unknown,
    @Headers('x-tollgate-channel') channel?: string,
  ): Promise<void> {
    if (!PERSON_ID.test(personId) || !CREDENTIAL_ID.test(id)) throw new PasskeyNotFoundError('of this person');
    const dto = parseBody(RemovePasskeyRequest, body);
    await this.commands.execute(
      new RevokePersonPasskeyCommand({ ...p, via: channelHeader(channel) }, personId, id, dto.assertion),
    );
  }
}
