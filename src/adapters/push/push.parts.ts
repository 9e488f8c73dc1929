import { Inject, Injectable, Logger, OnApplicationBootstrap, type Provider, type Type } from '@nestjs/common';
import { TOLLGATE_CONFIG, type TollgateConfig } from '../../infrastructure/config/config';
import { PushApprovalCallback } from './push-approval-callback';
import { PushSender } from './push-sender';
import { PushSubscriptionStore } from './push-subscription.store';
import { PushSubscriptionsController } from './push-subscriptions.controller';
import { SentNotifications } from './sent-notifications';
import { VapidKeys } from './vapid-keys';

/** Says once at start that push is off, and why: people would otherwise wait for notifications that never come. */
@Injectable()
export class PushStartNotice implements OnApplicationBootstrap {
  private readonly log = new Logger('Push');

  constructor(@Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig) {}

  onApplicationBootstrap(): void {
    if (this.config.push.subject !== undefined) return;
    // Information, not a warning: the default start (no public https URL, no email) has no contact to give.
    this.log.log(
      'Push notifications are off: VAPID needs a contact for push services. Set TOLLGATE_VAPID_SUBJECT (mailto:ops@example.com), or TOLLGATE_PUBLIC_URL as https, or TOLLGATE_SMTP_FROM',
    );
  }
}

/**
 * Web Push's part of the composition (adapters/channels.ts): its controllers, providers and approval callbacks. The
 * routes stay when push is off, so a browser is told why it cannot subscribe (503 push_unavailable) and people can
 * still list and remove their devices; nothing is sent then.
 */
export function pushControllers(_config: TollgateConfig): Type[] {
  return [PushSubscriptionsController];
}

export function pushProviders(_config: TollgateConfig): Provider[] {
  return [VapidKeys, PushSubscriptionStore, SentNotifications, PushSender, PushApprovalCallback, PushStartNotice];
}

/** The ApprovalCallback classes push registers (each driven by its own outbox bridge): none while push is off. */
export function pushCallbacks(config: TollgateConfig): Type[] {
  return config.push.subject !== undefined ? [PushApprovalCallback] : [];
}

/** The digest senders push registers: none while push is off. */
export function pushDigestSenders(config: TollgateConfig): Type[] {
  return pushCallbacks(config);
}
