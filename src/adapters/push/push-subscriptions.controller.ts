import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { isAgent, Principal } from '../../domain/shared/actor';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import { ApiProblems, BEARER_PROBLEMS, BODY_PROBLEMS, problemExample, ProblemView } from '../api/dto/problem.dto';
import { ForbiddenError } from '../api/errors';
import { PROBLEM_CONTENT_TYPE, problem } from '../api/problem';
import { CurrentPrincipal } from '../http/auth';
import { EgressGuard } from '../webhooks/egress-guard';
import {
  CreatePushSubscriptionRequest,
  PushSubscriptionListView,
  PushSubscriptionView,
  VapidPublicKeyView,
} from './push.dto';
import {
  PushSubscriptionNotFoundError,
  PushUnavailableError,
  readPushSubscription,
  TooManyPushSubscriptionsError,
} from './push-subscription.request';
import { PushSubscriptionRecord, PushSubscriptionStore } from './push-subscription.store';
import { VapidKeys } from './vapid-keys';

/** A subscription id as a path segment (`ps_` and base64url); anything else is no one's subscription. */
const SUBSCRIPTION_ID = /^ps_[A-Za-z0-9_-]{1,64}$/;

/** 403 before any body is read: notifications act for a person, and agents decide nothing. */
function person(p: Principal): Principal {
  if (isAgent(p)) throw new ForbiddenError('Agent tokens get no notifications: push subscriptions belong to people');
  return p;
}

function view(s: PushSubscriptionRecord): PushSubscriptionView {
  return {
    id: s.id,
    endpoint: s.endpoint,
    userAgent: s.userAgent,
    createdAt: s.createdAt.toISOString(),
    lastSentAt: s.lastSentAt?.toISOString() ?? null,
    failures: s.failures,
  };
}

/** The 503s of these routes: the database away (every route), or push off on this server. */
function ApiPushUnavailable() {
  return applyDecorators(
    ApiExtraModels(ProblemView),
    ApiResponse({
      status: 503,
      description:
        'The database cannot be reached (unavailable); push notifications are off on this server (push_unavailable)',
      content: {
        [PROBLEM_CONTENT_TYPE]: {
          schema: { $ref: getSchemaPath(ProblemView) },
          examples: {
            unavailable: { summary: 'The database cannot be reached', value: problemExample('unavailable') },
            push_unavailable: {
              summary: 'Push is off: the server has no VAPID subject',
              value: problem(503, 'push_unavailable', new PushUnavailableError().message),
            },
          },
        },
      },
    }),
  );
}

function ApiTooManySubscriptions() {
  return ApiResponse({
    status: 409,
    description: 'The person has as many devices subscribed as one may (too_many_push_subscriptions)',
    content: {
      [PROBLEM_CONTENT_TYPE]: {
        schema: { $ref: getSchemaPath(ProblemView) },
        examples: {
          too_many_push_subscriptions: {
            summary: 'The person has as many devices subscribed as one may',
            value: problem(409, 'too_many_push_subscriptions', new TooManyPushSubscriptionsError().message),
          },
        },
      },
    },
  });
}

/**
 * The caller's Web Push subscriptions: the browsers (phones, laptops) that get a notification with Approve and Reject
 * when a call they may decide is held (PushApprovalCallback). People only; each sees and removes only their own, in
 * their own tenant.
 */
@ApiTags('identity')
@ApiBearerAuth()
@Controller('v1')
export class PushSubscriptionsController {
  private readonly guard: EgressGuard;

  constructor(
    private readonly store: PushSubscriptionStore,
    private readonly keys: VapidKeys,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
  ) {
    this.guard = new EgressGuard(config.webhooks.allowPrivate);
  }

  @Get('push/vapid-public-key')
  @ApiOperation({
    operationId: 'getVapidPublicKey',
    summary: "The server's VAPID public key",
    description:
      'People only. The applicationServerKey a browser subscribes with (pushManager.subscribe); 503 push_unavailable when push is off on this server.',
  })
  @ApiOkResponse({ type: VapidPublicKeyView })
  @ApiProblems('unauthenticated', 'rate_limited', 'forbidden')
  @ApiPushUnavailable()
  async vapidPublicKey(@CurrentPrincipal() p: Principal): Promise<VapidPublicKeyView> {
    person(p);
    this.available();
    return { publicKey: (await this.keys.get()).publicKey };
  }

  @Post('me/push-subscriptions')
  @ApiOperation({
    operationId: 'createPushSubscription',
    summary: 'Subscribe a browser to notifications',
    description: `People only. The browser's PushSubscription.toJSON() (made with the key of GET /v1/push/vapid-public-key), and optionally a device label. The endpoint must be https and reach public addresses (or ones the operator allows, TOLLGATE_WEBHOOK_ALLOW_PRIVATE); the keys must be a P-256 point and a 16-byte secret. The same endpoint again refreshes it (and makes it yours, if someone else in the tenant had it). At most 10 per person (409 too_many_push_subscriptions); 503 push_unavailable when push is off.`,
  })
  @ApiBody({ type: CreatePushSubscriptionRequest })
  @ApiCreatedResponse({ type: PushSubscriptionView })
  @ApiProblems('unauthenticated', 'rate_limited', ...BODY_PROBLEMS, 'forbidden')
  @ApiTooManySubscriptions()
  @ApiPushUnavailable()
  async create(@CurrentPrincipal() p: Principal, @Body() body: unknown): Promise<PushSubscriptionView> {
    person(p);
    const s = await readPushSubscription(body, this.guard);
    this.available();
    const saved = await this.store.save({ tenantId: p.tenant, personId: p.id, ...s });
    if (!saved) throw new TooManyPushSubscriptionsError();
    return view(saved);
  }

  @Get('me/push-subscriptions')
  @ApiOperation({
    operationId: 'listPushSubscriptions',
    summary: 'List your subscribed browsers',
    description: 'People only. Oldest first; never their keys.',
  })
  @ApiOkResponse({ type: PushSubscriptionListView })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden')
  async list(@CurrentPrincipal() p: Principal): Promise<PushSubscriptionListView> {
    person(p);
    return { subscriptions: (await this.store.list(p.tenant, p.id)).map(view) };
  }

  @Delete('me/push-subscriptions/:id')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'deletePushSubscription',
    summary: 'Unsubscribe a browser',
    description: "People only, your own: another person's subscription is not found (404).",
  })
  @ApiParam({ name: 'id', description: "The subscription's id", type: 'string' })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden', 'not_found')
  async remove(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<void> {
    person(p);
    if (!SUBSCRIPTION_ID.test(id) || !(await this.store.remove(p.tenant, p.id, id)))
      throw new PushSubscriptionNotFoundError(SUBSCRIPTION_ID.test(id) ? id : 'of that id');
  }

  private available(): void {
    if (this.config.push.subject === undefined) throw new PushUnavailableError();
  }
}
