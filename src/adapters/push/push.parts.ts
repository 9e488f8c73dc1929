import type { Provider, Type } from '@nestjs/common';
import type { TollgateConfig } from '../../infrastructure/config/config';
import { PushApprovalCallback } from './push-approval-callback';
import { PushSender } from './push-sender';
import { PushSubscriptionStore } from './push-subscription.store';
import { PushSubscriptionsController } from './push-subscriptions.controller';
import { VapidKeys } from './vapid-keys';

/**
 * Web Push's part of the composition (adapters/channels.ts): its controllers, providers and approval callbacks. The
 * start banner says whether push is on (the CLI's `serve`). The
 * routes stay when push is off, so a browser is told why it cannot subscribe (503 push_unavailable) and people can
 * still list and remove their devices; nothing is sent then.
 */
export function pushControllers(_config: TollgateConfig): Type[] {
  return [PushSubscriptionsController];
}

export function pushProviders(_config: TollgateConfig): Provider[] {
  return [VapidKeys, PushSubscriptionStore, PushSender, PushApprovalCallback];
}

/** The ApprovalCallback classes push registers (each driven by its own outbox bridge): none while push is off. */
export function pushCallbacks(config: TollgateConfig): Type[] {
  return config.push.subject !== undefined ? [PushApprovalCallback] : [];
}

/** The digest senders push registers: none while push is off. */
export function pushDigestSenders(config: TollgateConfig): Type[] {
  return pushCallbacks(config);
}
