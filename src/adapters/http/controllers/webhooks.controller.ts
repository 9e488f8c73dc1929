import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { HeldForApprovalView } from '../../api/dto/change.dto';
import { held } from './policy.controller';
import { CommandBus } from '@nestjs/cqrs';
import {
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import {
  CreateWebhookCommand,
  DeleteWebhookCommand,
  WebhookNotFoundError,
} from '../../../application/commands/webhooks/webhook.commands';
import { Principal } from '../../../domain/shared/actor';
import { ValidationError } from '../../../domain/shared/domain-error';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../../infrastructure/config/config';
import { EgressGuard } from '../../webhooks/egress-guard';
import { newWebhookSecret, webhookKey } from '../../webhooks/webhook-signature';
import { Webhook, WebhookStore } from '../../webhooks/webhook.store';
import { CurrentPrincipal, Roles } from '../auth';
import { ApiListQuery } from '../../api/dto/api-params';
import { ApiProblems, BEARER_PROBLEMS, BODY_PROBLEMS } from '../../api/dto/problem.dto';
import { CreatedWebhookView, WebhookDeliveryPageView, WebhookPageView, WebhookView } from '../../api/dto/views.dto';
import { CreateWebhookRequest } from '../../api/dto/webhook.dto';
import { listParams } from '../../api/request-params';
import { parseBody } from '../../api/validation';
import { ForbiddenError } from '../../api/errors';

/**
 * Outgoing webhooks (admin): subscribe a URL to audit event types; deliveries are signed per Standard
 * Webhooks and retried with backoff, and each attempt can be read back. The secret is shown once, at creation.
 * URLs must reach public addresses unless the operator allows more (see EgressGuard).
 */
@ApiTags('webhooks')
@ApiBearerAuth()
@Controller('v1/webhooks')
export class WebhooksController {
  private readonly egress: EgressGuard;

  constructor(
    private readonly store: WebhookStore,
    private readonly commands: CommandBus,
    @Inject(TOLLGATE_CONFIG) config: TollgateConfig,
  ) {
    this.egress = new EgressGuard(config.webhooks.allowPrivate);
  }

  @Post()
  @Roles('admin')
  @ApiOperation({
    operationId: 'createWebhook',
    summary: 'Subscribe a URL to events',
    description:
      'Admins. Each event of the listed types is POSTed as {type, timestamp, data}, signed per Standard Webhooks and retried with backoff. The secret is shown in this answer only.',
  })
  @ApiBody({
    type: CreateWebhookRequest,
    examples: {
      decisions: {
        summary: 'Decisions only',
        value: {
          url: 'https://hooks.example.org/tollgate',
          events: ['ToolCallApproved', 'ToolCallRejected'],
          description: 'decisions to the ticketing system',
        },
      },
    },
  })
  @ApiCreatedResponse({ type: CreatedWebhookView })
  @ApiResponse({
    status: 202,
    type: HeldForApprovalView,
    description:
      'Governance (`governance: {quorum}` in the policy in force): held for other admins as a pending change (/v1/changes); `secret` is shown in this answer only, and deliveries start once it is applied',
  })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden')
  async create(
    @CurrentPrincipal() p: Principal,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<(Webhook & { secret: string }) | (HeldForApprovalView & { secret: string })> {
    const dto = parseBody(CreateWebhookRequest, body);
    if (dto.secret !== undefined && !webhookKey(dto.secret))
      throw new ValidationError([
        { path: 'secret', message: 'must be whsec_ followed by the base64 of 24 to 64 bytes' },
      ]);
    // Refused here so the admin hears of it at once; each delivery attempt checks again (DNS may change).
    const destination = await this.egress.check(dto.url);
    if (!destination.ok) throw new ValidationError([{ path: 'url', message: destination.detail }]);
    const secret = dto.secret ?? newWebhookSecret();
    // Made through a command, so the trail records who sent the tenant's events where (WebhookCreated).
    const created = await this.commands.execute(
      new CreateWebhookCommand(p, { url: dto.url, events: dto.events, description: dto.description ?? null, secret }),
    );
    if ('pendingChange' in created) return held(res, { pendingChange: created.pendingChange, secret });
    const { tenantId: _t, createdAt, ...rest } = created;
    return { ...rest, createdAt: createdAt.toISOString(), secret };
  }

  @Get()
  @Roles('admin')
  @ApiOperation({
    operationId: 'listWebhooks',
    summary: 'List webhooks',
    description: 'Admins. Without their secrets.',
  })
  @ApiListQuery()
  @ApiOkResponse({ type: WebhookPageView })
  @ApiProblems(...BEARER_PROBLEMS, 'validation_failed', 'forbidden')
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    const { cursor, limit } = listParams(query);
    return this.store.list(p.tenant, limit, cursor);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getWebhook', summary: 'Get a webhook', description: 'Admins. Without its secret.' })
  @ApiParam({ name: 'id', description: "The webhook's id", type: 'string' })
  @ApiOkResponse({ type: WebhookView })
  @ApiProblems(...BEARER_PROBLEMS, 'not_found', 'forbidden')
  async get(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<Webhook> {
    return this.visible(p, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook',
    description: 'Admins. Deliveries not yet made are dropped.',
  })
  @ApiParam({ name: 'id', description: "The webhook's id", type: 'string' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiProblems(...BEARER_PROBLEMS, 'not_found', 'forbidden')
  async remove(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<void> {
    await this.visible(p, id);
    await this.commands.execute(new DeleteWebhookCommand(p, id));
  }

  /** Delivery attempts, newest event first: status, each attempt's answer or error, and the next try. */
  @Get(':id/deliveries')
  @ApiOperation({
    operationId: 'listWebhookDeliveries',
    summary: "List a webhook's deliveries",
    description: 'Admins. Newest event first: status, each attempt (answer or error) and the next try.',
  })
  @ApiParam({ name: 'id', description: "The webhook's id", type: 'string' })
  @ApiListQuery()
  @ApiOkResponse({ type: WebhookDeliveryPageView })
  @ApiProblems(...BEARER_PROBLEMS, 'validation_failed', 'not_found', 'forbidden')
  async deliveries(@CurrentPrincipal() p: Principal, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    await this.visible(p, id);
    const { cursor, limit } = listParams(query);
    return this.store.deliveries(p.tenant, id, limit, cursor);
  }

  /** 404 before 403 (CONTRACT §11): another tenant's webhook does not exist for the caller. */
  private async visible(p: Principal, id: string): Promise<Webhook> {
    const w = await this.store.find(p.tenant, id);
    if (!w) throw new WebhookNotFoundError(id);
    if (!p.roles.includes('admin')) throw new ForbiddenError('Webhooks are for admins');
    return w;
  }
}
