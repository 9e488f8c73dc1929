import { createPublicKey } from 'node:crypto';
import { DomainError, ValidationError, ValidationFault } from '../../domain/shared/domain-error';
import { EgressGuard, isPublicAddress, parseWebhookUrl } from '../webhooks/egress-guard';
import { parseBody } from '../api/validation';
import { CreatePushSubscriptionRequest } from './push.dto';
import { plain } from './push-payload';
import { MAX_SUBSCRIPTIONS_PER_PERSON } from './push-subscription.store';

/** A subscription as kept: the endpoint as sent, the keys in unpadded base64url, the label as plain text. */
export interface NewPushSubscription {
  endpoint: string;
  p256dh: string;
  auth: string;
  userAgent: string | null;
}

/**
 * Reads POST /v1/me/push-subscriptions: the shape (push.dto.ts), then what a shape cannot say. The endpoint must be
 * https — http only to an address the operator allows as private (TOLLGATE_WEBHOOK_ALLOW_PRIVATE: a push service
 * stand-in on a test machine) — and reach addresses the egress guard allows, checked now so the person hears of it at
 * once (every send checks again). The keys must be what RFC 8291 seals to: a point on P-256 and a 16-byte secret.
 */
export async function readPushSubscription(body: unknown, guard: EgressGuard): Promise<NewPushSubscription> {
  const dto = parseBody(CreatePushSubscriptionRequest, body);
  const faults: ValidationFault[] = [];
  const p256dh = Buffer.from(dto.keys.p256dh.replace(/=+$/, ''), 'base64url');
  if (p256dh.length !== 65 || p256dh[0] !== 4 || !onCurve(p256dh))
    faults.push({ path: 'keys.p256dh', message: 'must be an uncompressed P-256 public key (65 bytes, base64url)' });
  const auth = Buffer.from(dto.keys.auth.replace(/=+$/, ''), 'base64url');
  if (auth.length !== 16) faults.push({ path: 'keys.auth', message: 'must be 16 bytes, base64url' });
  const endpoint = await checkEndpoint(dto.endpoint, guard);
  if (endpoint) faults.push({ path: 'endpoint', message: endpoint });
  if (faults.length > 0) throw new ValidationError(faults);
  const label = dto.userAgent === undefined ? '' : plain(dto.userAgent);
  return {
    endpoint: dto.endpoint,
    p256dh: p256dh.toString('base64url'),
    auth: auth.toString('base64url'),
    userAgent: label === '' ? null : label,
  };
}

/** Why the endpoint is refused, or undefined when it may be kept. */
async function checkEndpoint(raw: string, guard: EgressGuard): Promise<string | undefined> {
  const url = parseWebhookUrl(raw);
  if (typeof url === 'string') return url.replace('an http(s)', 'an https');
  if (url.hash !== '') return 'must not carry a fragment (#…)';
  const destination = await guard.check(raw);
  if (!destination.ok) return destination.detail.replace(/webhooks reach/, 'push endpoints reach');
  // Plain http is for a stand-in the operator let in, never for a public push service: the path is a capability.
  if (url.protocol === 'http:' && destination.addresses.some((a) => isPublicAddress(a.address)))
    return 'must be an https URL: push services are reached over https';
  return undefined;
}

/** Whether 65 bytes are an uncompressed point on P-256 (importing the key checks the curve equation). */
function onCurve(point: Buffer): boolean {
  try {
    const [x, y] = [point.subarray(1, 33), point.subarray(33)].map((b) => b.toString('base64url'));
    createPublicKey({ key: { kty: 'EC', crv: 'P-256', x, y }, format: 'jwk' });
    return true;
  } catch {
    return false;
  }
}

/** Push is off (no VAPID subject): nothing could be sent, so nothing is subscribed. */
export class PushUnavailableError extends DomainError {
  constructor() {
    super(
      'push_unavailable',
      'unavailable',
      'Push notifications are off on this server: the operator must set TOLLGATE_VAPID_SUBJECT (a mailto: or https: URL push services can reach them at), or TOLLGATE_PUBLIC_URL as https',
    );
  }
}

export class TooManyPushSubscriptionsError extends DomainError {
  constructor() {
    super(
      'too_many_push_subscriptions',
      'conflict',
      `You have ${MAX_SUBSCRIPTIONS_PER_PERSON} devices subscribed to notifications, as many as one may: remove one first`,
    );
  }
}

export class PushSubscriptionNotFoundError extends DomainError {
  constructor(id: string) {
    super('not_found', 'not_found', `Push subscription ${id} not found`);
  }
}
