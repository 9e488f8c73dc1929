import { Body, Controller, Get, Inject, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CLOCK, Clock } from '../../application/ports';
import { isAgent, Principal } from '../../domain/shared/actor';
import { ApiProblems, BEARER_PROBLEMS, BODY_PROBLEMS } from '../api/dto/problem.dto';
import { ForbiddenError } from '../api/errors';
import { CurrentPrincipal } from '../http/auth';
import { NotificationPreferencesDto } from './reach.dto';
import { mergePreferences, NotificationPreferences } from './preferences';
import { ReachStore } from './reach.store';

function person(p: Principal): Principal {
  if (isAgent(p)) throw new ForbiddenError('Agent tokens get no notifications: these settings belong to people');
  return p;
}

/** A person's own notification settings: per channel immediate, hourly or daily digests, or off; quiet hours. */
@ApiTags('identity')
@ApiBearerAuth()
@Controller('v1/me/notifications')
export class NotificationPreferencesController {
  constructor(
    private readonly store: ReachStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'getNotificationPreferences',
    summary: 'How Tollgate reaches me',
    description: 'The caller’s settings (the defaults until they set any). People only: an agent token gets 403.',
  })
  @ApiOkResponse({ type: NotificationPreferencesDto })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden')
  async get(@CurrentPrincipal() p: Principal): Promise<NotificationPreferences> {
    const me = person(p);
    return this.store.preferences(me.tenant, me.id);
  }

  @Put()
  @ApiOperation({
    operationId: 'putNotificationPreferences',
    summary: 'Set how Tollgate reaches me',
    description:
      'Any of the fields; the others stay. Per channel (`email`, `push`, `slack` direct messages): `immediate`, `hourly` or `daily` digests of what waits, or `off`; `dailyAt` and `timeZone` for the daily digest and quiet hours; `quietHours` `{from, to}` or null.',
  })
  @ApiBody({ type: NotificationPreferencesDto })
  @ApiOkResponse({ type: NotificationPreferencesDto })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden')
  async put(@CurrentPrincipal() p: Principal, @Body() body: unknown): Promise<NotificationPreferences> {
    const me = person(p);
    const next = mergePreferences(await this.store.preferences(me.tenant, me.id), body);
    await this.store.save(me.tenant, me.id, next, this.clock.now());
    return next;
  }
}
