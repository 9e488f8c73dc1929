import { Body, Controller, Delete, Get, Headers, HttpCode, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { DelegationPageView, DelegationView } from '../../../application/views/delegation.view';
import { Principal } from '../../../domain/shared/actor';
import { endDelegation, getDelegation, listDelegations, setDelegation } from '../../api/delegation.request';
import { ApiChannelHeader, ApiListQuery } from '../../api/dto/api-params';
import {
  DelegationPageView as DelegationPageSchema,
  DelegationView as DelegationSchema,
  SetDelegationRequest,
} from '../../api/dto/delegation.dto';
import { ApiProblems, BEARER_PROBLEMS, BODY_PROBLEMS } from '../../api/dto/problem.dto';
import { channelHeader } from '../../api/request-params';
import { CurrentPrincipal, Roles } from '../auth';

const WHILE_IT_HOLDS =
  'While it holds, what would reach you (the inbox, the live stream, email, push) reaches your delegate too, who decides on your behalf with your rights as your last sign-in showed them, never more: not beyond your roles, not a call you could not approve yourself (separation of duties holds for both of you), once in a quorum between you. It is not passed on (a delegate does not delegate what was delegated to them), and it ends by itself at `until`.';

/** A person's delegation (out of office): one at a time, set, read and ended by the person. People only. */
@ApiTags('identity')
@ApiBearerAuth()
@Controller('v1/me/delegation')
export class MyDelegationController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Put()
  @HttpCode(200)
  @ApiOperation({
    operationId: 'setDelegation',
    summary: 'Delegate your decisions (out of office)',
    description: `People only. Sets your delegation, replacing the one you had. ${WHILE_IT_HOLDS} Refused: yourself (delegation_to_self), someone not on record or an email no single person with a role has (unknown_person, ambiguous_person), an agent (delegate_is_agent), someone who already acts for 20 people (too_many_delegations), a \`from\` in the past or more than 366 days ahead, an \`until\` not after it or more than 90 days after it (validation_failed). Recorded in the audit trail as DelegationSet; the same request again changes nothing.`,
  })
  @ApiChannelHeader()
  @ApiBody({ type: SetDelegationRequest })
  @ApiOkResponse({ type: DelegationSchema })
  @ApiProblems(
    ...BEARER_PROBLEMS,
    ...BODY_PROBLEMS,
    'forbidden',
    'unknown_person',
    'ambiguous_person',
    'delegation_to_self',
    'delegate_is_agent',
    'too_many_delegations',
  )
  put(
    @CurrentPrincipal() p: Principal,
    @Body() body: unknown,
    @Headers('x-tollgate-channel') channel?: string,
  ): Promise<DelegationView> {
    return this.commands.execute(setDelegation(p, body, () => channelHeader(channel)));
  }

  @Get()
  @ApiOperation({
    operationId: 'getDelegation',
    summary: 'Your delegation',
    description: `People only. Your delegation that holds now (\`active\`) or is to come; one past its \`until\` is no more (404 no_delegation). ${WHILE_IT_HOLDS}`,
  })
  @ApiOkResponse({ type: DelegationSchema })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden', 'no_delegation')
  get(@CurrentPrincipal() p: Principal): Promise<DelegationView> {
    return this.queries.execute(getDelegation(p));
  }

  @Delete()
  @HttpCode(204)
  @ApiOperation({
    operationId: 'endDelegation',
    summary: 'End your delegation now',
    description:
      'People only. Ends your delegation at once (or withdraws one yet to start): from now your delegate decides nothing on your behalf. Recorded in the audit trail as DelegationEnded. Without one, nothing happens (204 all the same).',
  })
  @ApiChannelHeader()
  @ApiNoContentResponse({ description: 'Ended, or there was none' })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden')
  async end(@CurrentPrincipal() p: Principal, @Headers('x-tollgate-channel') channel?: string): Promise<void> {
    await this.commands.execute(endDelegation(p, () => channelHeader(channel)));
  }
}

/** The tenant's delegations, for oversight: who decides for whom, now and to come. */
@ApiTags('identity')
@ApiBearerAuth()
@Controller('v1/delegations')
export class DelegationsController {
  constructor(private readonly queries: QueryBus) {}

  @Get()
  @Roles('admin', 'auditor')
  @ApiOperation({
    operationId: 'listDelegations',
    summary: "List the tenant's delegations (admins and auditors)",
    description:
      "Admins and auditors. The tenant's delegations that hold now (`active`) or are to come, by the delegating person's id: who decides for whom, and until when. Those past their `until` are left out (the audit trail keeps every DelegationSet and DelegationEnded).",
  })
  @ApiListQuery()
  @ApiOkResponse({ type: DelegationPageSchema })
  @ApiProblems(...BEARER_PROBLEMS, 'validation_failed', 'forbidden')
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>): Promise<DelegationPageView> {
    return this.queries.execute(listDelegations(p, query));
  }
}
