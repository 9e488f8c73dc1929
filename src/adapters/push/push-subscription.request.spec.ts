import { createECDH, randomBytes } from 'node:crypto';
import { generateVAPIDKeys } from 'web-push';
import { ValidationError } from '../../domain/shared/domain-error';
import { ConfigError } from '../../infrastructure/config/config';
import { EgressGuard, ResolvedAddress } from '../webhooks/egress-guard';
import { readPushSubscription } from './push-subscription.request';
import { checkPair } from './vapid-keys';

const DNS: Record<string, ResolvedAddress[]> = {
  'fcm.googleapis.com': [{ address: '142.250.180.10', family: 4 }],
  'push.internal': [{ address: '10.0.0.7', family: 4 }],
  'sneaky.example': [
    { address: '142.250.180.10', family: 4 },
    { address: '127.0.0.1', family: 4 },
  ],
};
const resolver = async (host: string) => DNS[host] ?? [];
const strict = new EgressGuard([], resolver);
const lab = new EgressGuard(['10.0.0.0/8'], resolver);

function browser() {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return {
    endpoint: 'https://fcm.googleapis.com/fcm/send/abc:APA91b',
    expirationTime: null,
    keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') },
  };
}

/** The faults of a refused body, as `path: message`. */
async function faults(body: unknown, guard = strict): Promise<string[]> {
  try {
    await readPushSubscription(body, guard);
  } catch (e) {
    if (e instanceof ValidationError) return e.faults.map((f) => `${f.path}: ${f.message}`);
    throw e;
  }
  return [];
}

describe('reading a push subscription', () => {
  it("takes the browser's PushSubscription JSON as is, keys unpadded, the label as plain text", async () => {
    const b = browser();
    const padded = { ...b, keys: { p256dh: `${b.keys.p256dh}=`, auth: `${b.keys.auth}==` } };
    expect(await readPushSubscription({ ...padded, userAgent: 'Pixel\u202E 8\n' }, strict)).toEqual({
      endpoint: b.endpoint,
      p256dh: b.keys.p256dh,
      auth: b.keys.auth,
      userAgent: 'Pixel 8',
    });
  });

  it('refuses keys that are not a P-256 point and a 16-byte secret', async () => {
    const b = browser();
    const compressed = Buffer.from(b.keys.p256dh, 'base64url').subarray(0, 33);
    compressed[0] = 2;
    expect(
      await faults({
        ...b,
        keys: { p256dh: compressed.toString('base64url'), auth: randomBytes(20).toString('base64url') },
      }),
    ).toEqual([
      'keys.p256dh: must be an uncompressed P-256 public key (65 bytes, base64url)',
      'keys.auth: must be 16 bytes, base64url',
    ]);
    const offCurve = Buffer.alloc(65, 1);
    offCurve[0] = 4;
    expect(await faults({ ...b, keys: { ...b.keys, p256dh: offCurve.toString('base64url') } })).toEqual([
      'keys.p256dh: must be an uncompressed P-256 public key (65 bytes, base64url)',
    ]);
  });

  it('refuses endpoints the egress guard refuses, plain http to a public service, and oversized fields', async () => {
    const b = browser();
    const at = async (endpoint: string, guard = strict) => (await faults({ ...b, endpoint }, guard)).join('; ');
    expect(await at('https://push.internal/x')).toMatch(
      /^endpoint: push\.internal does not resolve to public addresses/,
    );
    expect(await at('https://push.internal/x')).toContain('push endpoints reach private');
    expect(await at('https://sneaky.example/x')).toMatch(/^endpoint: sneaky\.example does not resolve to public/);
    expect(await at('https://nowhere.example/x')).toMatch(/^endpoint: /);
    expect(await at('http://fcm.googleapis.com/fcm/send/x')).toBe(
      'endpoint: must be an https URL: push services are reached over https',
    );
    expect(await at('https://fcm.googleapis.com/x#frag')).toBe('endpoint: must not carry a fragment (#…)');
    expect(await at('wss://fcm.googleapis.com/x')).toBe('endpoint: must be an https URL');
    // A stand-in the operator let in may be plain http (tests, a lab push service).
    expect(await at('http://push.internal/x', lab)).toBe('');
    expect(await faults({ ...b, endpoint: `https://fcm.googleapis.com/${'x'.repeat(2048)}` })).toEqual([
      'endpoint: must be shorter than or equal to 2048 characters',
    ]);
    expect(await faults({ ...b, userAgent: 'x'.repeat(301) })).toEqual([
      'userAgent: must be shorter than or equal to 300 characters',
    ]);
    expect(await faults({ ...b, expirationTime: 'soon' })).toEqual([
      'expirationTime: must be a number conforming to the specified constraints',
    ]);
  });
});

describe('a configured VAPID key pair', () => {
  it('is taken when both halves are of one P-256 pair, and refused otherwise without quoting them', () => {
    const pair = generateVAPIDKeys();
    expect(() => checkPair(pair)).not.toThrow();
    const other = generateVAPIDKeys();
    expect(() => checkPair({ ...pair, privateKey: other.privateKey })).toThrow(
      new ConfigError('TOLLGATE_VAPID_PUBLIC_KEY is not the public key of TOLLGATE_VAPID_PRIVATE_KEY'),
    );
    expect(() => checkPair({ ...pair, publicKey: pair.publicKey.slice(1) })).toThrow(/65 bytes/);
    try {
      checkPair({ ...pair, privateKey: 'not-a-key' });
    } catch (e) {
      expect((e as Error).message).toMatch(/32 bytes/);
      expect((e as Error).message).not.toContain('not-a-key');
    }
  });
});
