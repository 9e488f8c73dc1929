import { Inject, Optional } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { personActor, Principal } from '../../../domain/shared/actor';
import { DomainError } from '../../../domain/shared/domain-error';
import { Webhook, WebhookState } from '../../../domain/webhook/webhook.aggregate';
import { CLOCK, Clock, IDS, IdGenerator, UNIT_OF_WORK, UnitOfWork, WEBHOOKS, WebhookRepository } from '../../ports';
import type { HeldForApproval } from '../../views/change.view';
import { GovernanceGate } from '../changes/governance-gate';

/** The webhook made; under governance (four eyes), the pending change instead. */
export class CreateWebhookCommand extends Command<Readonly<WebhookState> | HeldForApproval> {
  constructor(
    readonly principal: Principal,
    readonly input: { url: string; events: string[]; description: string | null; secret: string },
    /** Applying this approved pending change: no gate. */
    readonly approvedChange?: string,
  ) {
    super();
  }
}

export class DeleteWebhookCommand extends Command<void> {
  constructor(
    readonly principal: Principal,
    readonly id: string,
  ) {
    super();
  }
}

export class WebhookNotFoundError extends DomainError {
  constructor(id: string) {
    super('not_found', 'not_found', `No webhook ${id}`);
  }
}

/** A new subscription and its WebhookCreated event, in one transaction. Answers the webhook (without its secret). */
@CommandHandler(CreateWebhookCommand)
export class CreateWebhookHandler implements ICommandHandler<CreateWebhookCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(WEBHOOKS) private readonly webhooks: WebhookRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(IDS) private readonly ids: IdGenerator,
    // Bound by the composition root (governance.composition.ts); optional so the unit tests' wiring stays short.
    @Optional() private readonly gate?: GovernanceGate,
  ) {}

  execute({ principal: p, input, approvedChange }: CreateWebhookCommand) {
    const webhook = Webhook.create({
      tenantId: p.tenant,
      id: this.ids.next('wh'),
      url: input.url,
      events: input.events,
      description: input.description,
      by: personActor(p, 'api'),
      at: this.clock.now(),
    });
    return this.uow.run(async () => {
      // Four eyes: under `governance`, the subscription waits for another admin (its secret waits beside it).
      const held = approvedChange
        ? null
        : await this.gate?.hold({
            tenantId: p.tenant,
            by: personActor(p, 'api'),
            kind: 'webhook_create',
            summary: `New webhook to ${input.url} for ${input.events.join(', ')}`,
            payload: { url: input.url, events: input.events, description: input.description },
            secret: input.secret,
          });
      if (held) return held;
      await this.webhooks.save(webhook, input.secret);
      return webhook.snapshot();
    });
  }
}

/** Removes a subscription (its queued deliveries are never sent) and records WebhookDeleted. */
@CommandHandler(DeleteWebhookCommand)
export class DeleteWebhookHandler implements ICommandHandler<DeleteWebhookCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(WEBHOOKS) private readonly webhooks: WebhookRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ principal: p, id }: DeleteWebhookCommand) {
    return this.uow.run(async () => {
      const webhook = await this.webhooks.find(p.tenant, id);
      if (!webhook) throw new WebhookNotFoundError(id);
      webhook.delete(personActor(p, 'api'), this.clock.now());
      await this.webhooks.save(webhook);
    });
  }
}
