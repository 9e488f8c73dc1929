import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { LoginTransaction } from './relying-party';

/** A sign-in must come back within this long; the cookie and the sealed expiry both end then. */
export const LOGIN_TTL_S = 600;
/** The longest return_to (2,048) seals to about 3,040 characters: under a browser's 4,096 bytes with the cookie's name. */
const MAX_SEALED = 4096;

/**
 * The login transaction (state, nonce, PKCE verifier, where to return) travels in a short-lived cookie sealed with
 * AES-256-GCM: the browser can neither read nor change it, and every instance can open it (the key is derived from
 * the client secret they share), so no table is needed. Each sign-in has its own cookie, named after its state
 * (several tabs may sign in at once). The callback clears it, whatever its outcome: one transaction, one callback
 * (and the provider takes each code once).
 */
export class LoginSealer {
  private readonly key: Buffer;

  constructor(clientSecret: string) {
    this.key = Buffer.from(hkdfSync('sha256', clientSecret, 'tollgate', 'tollgate web login transaction v1', 32));
  }

  seal(t: LoginTransaction, now = Date.now()): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const plain = Buffer.from(JSON.stringify({ ...t, exp: Math.floor(now / 1000) + LOGIN_TTL_S }));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The transaction, or undefined when the cookie was not sealed here, was changed, or is too old. */
  open(sealed: string, now = Date.now()): LoginTransaction | undefined {
    if (sealed.length > MAX_SEALED || !/^[A-Za-z0-9_-]+$/.test(sealed)) return undefined;
    const raw = Buffer.from(sealed, 'base64url');
    if (raw.length < 12 + 16 + 2) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      const plain = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
      const t = JSON.parse(plain.toString('utf8')) as Partial<LoginTransaction> & { exp?: unknown };
      if (typeof t.exp !== 'number' || t.exp * 1000 <= now) return undefined;
      if (![t.state, t.nonce, t.codeVerifier, t.returnTo].every((v) => typeof v === 'string' && v.length > 0))
        return undefined;
      return { state: t.state!, nonce: t.nonce!, codeVerifier: t.codeVerifier!, returnTo: t.returnTo! };
    } catch {
      return undefined;
    }
  }
}
