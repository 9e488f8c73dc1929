'use strict';
/**
 * For scripts/screenshots.js (`push-notification`): a Web Push service on loopback and the browser's side of one
 * subscription, with node:crypto only, as test/support/push-service.ts has them for the tests. The server sends its
 * real, encrypted push request here; the "browser" decrypts it (RFC 8291 over RFC 8188 aes128gcm) as Chromium would,
 * and the plaintext is what CDP's ServiceWorker.deliverPushMessage then hands the inbox's service worker. (Chromium's
 * own push service is Google's FCM, which a subscription made on this machine cannot reach.)
 */
const { createECDH, createDecipheriv, hkdfSync, randomBytes } = require('node:crypto');
const { createServer } = require('node:http');

/** RFC 8291 §3.4 and RFC 8188 §2: one aes128gcm record, keyed by ECDH with the sender's key from the header. */
function decrypt(ecdh, authSecret, body) {
  const salt = body.subarray(0, 16);
  const idlen = body[20];
  const senderPublic = body.subarray(21, 21 + idlen);
  const record = body.subarray(21 + idlen);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), ecdh.getPublicKey(), senderPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', ecdh.computeSecret(senderPublic), authSecret, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  let end = padded.length - 1; // the last record ends with the delimiter 0x02, then any zero padding
  while (end >= 0 && padded[end] === 0) end--;
  if (padded[end] !== 2) throw new Error('no last-record delimiter');
  return padded.subarray(0, end).toString('utf8');
}

/**
 * Starts the stand-in with one subscription. `subscription` is what PushSubscription.toJSON() gives; `next(which)`
 * resolves with the next message (decrypted text and parsed) that `which` takes.
 */
async function startPushStandIn() {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const authSecret = randomBytes(16);
  const received = [];
  const waiting = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        if (req.method !== 'POST' || req.url !== '/push/this-browser') throw new Error(`${req.method} ${req.url}`);
        const text = decrypt(ecdh, authSecret, Buffer.concat(chunks));
        received.push({ text, message: JSON.parse(text) });
        res.writeHead(201).end();
      } catch (e) {
        console.error(`The push stand-in refused a request: ${e.message}`);
        res.writeHead(400).end();
      }
      for (const w of waiting.splice(0)) w();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    subscription: {
      endpoint: `${origin}/push/this-browser`,
      expirationTime: null,
      keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: authSecret.toString('base64url') },
    },
    async next(which, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = received.find((r) => which(r.message));
        if (found) return found;
        if (Date.now() > deadline) throw new Error('no such push reached the stand-in');
        await new Promise((r) => {
          waiting.push(r);
          setTimeout(r, 500);
        });
      }
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

module.exports = { startPushStandIn };
