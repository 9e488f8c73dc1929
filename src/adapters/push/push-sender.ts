import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { generateRequestDetails } from 'web-push';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import { EgressGuard } from '../webhooks/egress-guard';
import { deliverPush } from './push-delivery';
import { MAX_PAYLOAD_BYTES } from './push-payload';
import { PushSubscriptionRecord, PushSubscriptionStore } from './push-subscription.store';
import { VapidKeys } from './vapid-keys';

/** How one send went: taken by the push service, the subscription is gone (and now forgotten), or it failed. */
export type PushSendResult = 'sent' | 'gone' | 'failed';

export interface PushSendOptions {
  /** Seconds the push service may hold the message for an offline device; past it, it is dropped. */
  ttlSeconds: number;
  urgency: 'normal' | 'high';
  /** Messages of one topic replace each other while undelivered: an outcome replaces its request on a phone asleep. */
  topic: string;
}

/**
 * Seals a payload to one subscription (RFC 8291, aes128gcm), signs the request with the VAPID key (RFC 8292) and
 * sends it through the egress guard. web-push only builds the request: it never sends it, so no request leaves but
 * through the guard. A 404 or 410 means the browser dropped the subscription: it is forgotten. Anything else that is
 * not 2xx counts a failure on the subscription (shown to its owner) and is logged without the endpoint's secret path.
 */
@Injectable()
export class PushSender {
  private readonly log = new Logger('Push');
  private readonly guard: EgressGuard;

  constructor(
    private readonly keys: VapidKeys,
    private readonly subscriptions: PushSubscriptionStore,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
  ) {
    this.guard = new EgressGuard(config.webhooks.allowPrivate);
  }

  /** Whether push can be sent at all: VAPID needs a subject the push service can reach the operator at. */
  get available(): boolean {
    return this.config.push.subject !== undefined;
  }

  async send(s: PushSubscriptionRecord, payload: string, opts: PushSendOptions): Promise<PushSendResult> {
    const subject = this.config.push.subject;
    if (!subject) return 'failed';
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) throw new Error(`push payload over ${MAX_PAYLOAD_BYTES} bytes`);
    const vapid = await this.keys.get();
    const details = generateRequestDetails(
      { endpoint: s.endpoint, keys: { p256dh: s.p256dh, auth: s.auth } },
      payload,
      {
        vapidDetails: { subject, publicKey: vapid.publicKey, privateKey: vapid.privateKey },
        TTL: Math.max(0, Math.floor(opts.ttlSeconds)),
        urgency: opts.urgency,
        topic: opts.topic,
        contentEncoding: 'aes128gcm',
      },
    );
    const headers = Object.fromEntries(Object.entries(details.headers).map(([k, v]) => [k, String(v)]));
    const outcome = await deliverPush(this.guard, s.endpoint, headers, details.body, this.config.webhooks.timeoutMs);
    const where = `${s.id} of ${s.personId} (${origin(s.endpoint)})`;
    if ('status' in outcome && outcome.status >= 200 && outcome.status < 300) {
      await this.subscriptions.sent(s);
      return 'sent';
    }
    if ('status' in outcome && (outcome.status === 404 || outcome.status === 410)) {
      await this.subscriptions.forget(s);
      this.log.log(`Push subscription ${where} is gone (HTTP ${outcome.status}): forgotten`);
      return 'gone';
    }
    await this.subscriptions.failed(s);
    this.log.warn(
      `Push to ${where} failed: ${'status' in outcome ? `HTTP ${outcome.status}` : `${outcome.error} (${outcome.cause})`}`,
    );
    return 'failed';
  }
}

/** The endpoint's origin only: its path is the subscription's capability, not for logs. */
function origin(endpoint: string): string {
  try {
    return new URL(endpoint).origin;
  } catch {
    return 'an invalid URL';
  }
}

/** A push Topic for a call (at most 32 base64url characters, RFC 8030 §5.4): its id may be longer or not base64url. */
export function topicFor(toolCallId: string): string {
  return createHash('sha256').update(toolCallId).digest('base64url').slice(0, 32);
}
