/**
 * A Web Push service stand-in on loopback, and the browser's side of a subscription, both with node:crypto only. The
 * stand-in takes push requests as a real push service does (RFC 8030): it checks the VAPID authorisation (RFC 8292)
 * and hands the body to the subscription's "browser", which decrypts it (RFC 8291 over RFC 8188 aes128gcm) exactly as
 * a browser would. Nothing here trusts web-push: a message it cannot decrypt or verify is recorded as refused.
 */
import { createECDH, createDecipheriv, createPublicKey, ECDH, hkdfSync, randomBytes, verify } from 'node:crypto';
import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A browser's push subscription: its P-256 key pair and auth secret, as PushManager.subscribe() makes them. */
export class BrowserSubscription {
  readonly ecdh: ECDH = createECDH('prime256v1');

  /** New keys, as a browser makes them; or given ones (RFC 8291's test vector). */
  constructor(
    readonly endpoint: string,
    keys?: { privateKey: Buffer; authSecret: Buffer },
    readonly authSecret = keys?.authSecret ?? randomBytes(16),
  ) {
    if (keys) this.ecdh.setPrivateKey(keys.privateKey);
    else this.ecdh.generateKeys();
  }

  /** What PushSubscription.toJSON() gives. */
  toJSON() {
    return {
      endpoint: this.endpoint,
      expirationTime: null,
      keys: {
        p256dh: this.ecdh.getPublicKey().toString('base64url'),
        auth: this.authSecret.toString('base64url'),
      },
    };
  }

  /** RFC 8291 §3.4 and RFC 8188 §2: one aes128gcm record, keyed by ECDH with the sender's key from the header. */
  decrypt(body: Buffer): string {
    if (body.length < 21) throw new Error('shorter than an aes128gcm header');
    const salt = body.subarray(0, 16);
    const rs = body.readUInt32BE(16);
    const idlen = body[20];
    const senderPublic = body.subarray(21, 21 + idlen);
    if (idlen !== 65) throw new Error(`keyid is ${idlen} bytes, not an uncompressed P-256 key`);
    const record = body.subarray(21 + idlen);
    if (record.length > rs) throw new Error('more than one record: a push message is one');
    const uaPublic = this.ecdh.getPublicKey();
    const ecdhSecret = this.ecdh.computeSecret(senderPublic);
    const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, senderPublic]);
    const ikm = Buffer.from(hkdfSync('sha256', ecdhSecret, this.authSecret, keyInfo, 32));
    const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
    const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
    const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
    decipher.setAuthTag(record.subarray(record.length - 16));
    const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
    // The last record ends with the delimiter 0x02, then any zero padding.
    let end = padded.length - 1;
    while (end >= 0 && padded[end] === 0) end--;
    if (padded[end] !== 2) throw new Error('no last-record delimiter');
    return padded.subarray(0, end).toString('utf8');
  }
}

/** A VAPID JWT's claims once its signature held. */
export interface VapidClaims {
  aud: string;
  exp: number;
  sub: string;
}

/**
 * Checks `Authorization: vapid t=<JWT>, k=<key>` as a push service does (RFC 8292 §3): ES256 under the key `k`, the
 * audience the push resource's origin, an expiry in the future and at most 24 hours away, a contact `sub`.
 */
export function verifyVapid(
  authorization: string | undefined,
  origin: string,
  nowSeconds = Date.now() / 1000,
): { claims: VapidClaims; key: string } {
  const m = /^vapid t=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+), k=([A-Za-z0-9_-]+)$/.exec(authorization ?? '');
  if (!m) throw new Error(`not a vapid authorization: ${authorization}`);
  const [, jwt, k] = m;
  const [h, p, s] = jwt.split('.');
  const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
  if (header.alg !== 'ES256') throw new Error(`alg ${header.alg}, not ES256`);
  const point = Buffer.from(k, 'base64url');
  if (point.length !== 65 || point[0] !== 4) throw new Error('k is not an uncompressed P-256 key');
  const key = createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33).toString('base64url'),
    },
    format: 'jwk',
  });
  const ok = verify(
    'sha256',
    Buffer.from(`${h}.${p}`),
    { key, dsaEncoding: 'ieee-p1363' },
    Buffer.from(s, 'base64url'),
  );
  if (!ok) throw new Error('the VAPID signature does not verify');
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as VapidClaims;
  if (claims.aud !== origin) throw new Error(`aud ${claims.aud}, not ${origin}`);
  if (!(claims.exp > nowSeconds && claims.exp <= nowSeconds + 24 * 3600))
    throw new Error(`exp ${claims.exp} out of range`);
  if (!/^(mailto:|https:)/.test(claims.sub ?? '')) throw new Error(`sub ${claims.sub} is no contact`);
  return { claims, key: k };
}

export interface PushDelivery {
  /** The subscription's path on the stand-in (`/push/<name>`). */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The status the stand-in answered. */
  answered: number;
  /** The decrypted message as the browser's worker gets it (text), and parsed; else why not. */
  text?: string;
  message?: any;
  refused?: string;
  vapid?: { claims: VapidClaims; key: string };
}

export interface PushServiceStandIn {
  origin: string;
  deliveries: PushDelivery[];
  /** A new subscription on this service, its browser keys made now. */
  subscribe(name: string): BrowserSubscription;
  /** The status to answer for a subscription (410 once the "browser" unsubscribed); 201 by default. */
  answer(name: string, status: number): void;
  close(): Promise<void>;
}

export async function startPushService(): Promise<PushServiceStandIn> {
  const browsers = new Map<string, BrowserSubscription>();
  const statuses = new Map<string, number>();
  const deliveries: PushDelivery[] = [];
  let origin = '';
  const read = (req: IncomingMessage) =>
    new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks)));
    });
  const server: Server = createServer(async (req, res) => {
    const body = await read(req);
    const path = req.url ?? '';
    const name = /^\/push\/([\w-]+)$/.exec(path)?.[1];
    const browser = name ? browsers.get(name) : undefined;
    const delivery: PushDelivery = { path, headers: req.headers, answered: 201 };
    try {
      if (req.method !== 'POST' || !browser) throw new Error(`no subscription at ${req.method} ${path}`);
      delivery.vapid = verifyVapid(req.headers.authorization, origin);
      if (req.headers['content-encoding'] !== 'aes128gcm') throw new Error('not aes128gcm');
      if (!/^\d+$/.test(String(req.headers.ttl ?? ''))) throw new Error('no TTL');
      delivery.text = browser.decrypt(body);
      delivery.message = JSON.parse(delivery.text);
      delivery.answered = statuses.get(name!) ?? 201;
    } catch (e) {
      delivery.refused = (e as Error).message;
      delivery.answered = browser ? 400 : 404;
    }
    deliveries.push(delivery);
    res.writeHead(delivery.answered).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    deliveries,
    subscribe(name) {
      const b = new BrowserSubscription(`${origin}/push/${name}`);
      browsers.set(name, b);
      return b;
    },
    answer: (name, status) => statuses.set(name, status),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
