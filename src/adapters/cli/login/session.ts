import { credentialsPath, findLogin, saveLogin, withCredentialsLock, type StoredLoginEntry } from './credentials';
import { discover, ProviderError, refresh, toEntry } from './provider';

/** A stored login that can no longer give a token: the person has to sign in again. */
export class LoginExpiredError extends Error {}

/**
 * The bearer token a login sends. Tollgate verifies a provider's tokens itself, against the provider's keys and
 * with its web and CLI client ids as the audiences it accepts, so it needs a signed JWT meant for this client:
 * the access token when it is one whose `aud` names the CLI's client id (a provider set up to issue access tokens
 * for Tollgate), else the ID token, whose audience is always the client. Access tokens are often for someone else
 * (Entra ID's for Microsoft Graph, Okta's for `api://default`) or opaque (Google's), and Tollgate could not verify
 * those. Both are refreshed alike.
 */
export function bearerOf(e: Pick<StoredLoginEntry, 'access_token' | 'id_token' | 'clientId'>): string {
  if (!e.id_token || claimsOf(e.access_token)?.aud?.includes(e.clientId)) return e.access_token;
  return e.id_token;
}

function isJwt(token: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);
}

/** A JWT's `exp` and `aud`, unverified: only to choose a token and know when to refresh, never to trust anything. */
function claimsOf(token: string): { exp?: number; aud?: string[] } | undefined {
  if (!isJwt(token)) return undefined;
  try {
    const p = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as Record<string, unknown>;
    const aud =
      typeof p.aud === 'string'
        ? [p.aud]
        : Array.isArray(p.aud)
          ? p.aud.filter((a) => typeof a === 'string')
          : undefined;
    return { exp: typeof p.exp === 'number' ? p.exp : undefined, aud };
  } catch {
    return undefined;
  }
}

/** When the bearer expires: its own `exp` when it is a JWT, else the token response's `expires_in`. */
export function expiryOf(e: StoredLoginEntry): number | undefined {
  return claimsOf(bearerOf(e))?.exp ?? e.expires_at;
}

/**
 * Refresh this long before expiry: a minute, or a quarter of the token's life for short-lived tokens, so a
 * command that starts just before expiry does not send a token that expires on the way.
 */
function margin(e: StoredLoginEntry, expiry: number): number {
  return Math.min(60, Math.max(1, Math.floor((expiry - e.obtained_at) / 4)));
}

/**
 * The token of a stored login for one server: refreshed shortly before expiry, and once when the server answers
 * 401 (`rejected`), with the new tokens written back. One refresh at a time per process.
 */
export class StoredLogin {
  private stale = false;
  private refreshing?: Promise<void>;

  constructor(
    private entry: StoredLoginEntry,
    private readonly path = credentialsPath(),
  ) {}

  static find(url: string, path = credentialsPath()): StoredLogin | undefined {
    const entry = findLogin(url, path);
    return entry ? new StoredLogin(entry, path) : undefined;
  }

  get url(): string {
    return this.entry.url;
  }

  /** The token as stored now (for display: who the inbox says you are). */
  get current(): string {
    return bearerOf(this.entry);
  }

  /** The server refused `token`: the next `token()` refreshes (once; the SDK asks again after a 401 only once). */
  rejected(token: string): void {
    if (token === this.current) this.stale = true;
  }

  async token(now = () => Math.floor(Date.now() / 1000)): Promise<string> {
    const expiry = expiryOf(this.entry);
    const due = expiry !== undefined && now() >= expiry - margin(this.entry, expiry);
    if (this.stale || due) {
      this.refreshing ??= withCredentialsLock(() => this.refresh(now), this.path).finally(
        () => (this.refreshing = undefined),
      );
      await this.refreshing;
    }
    return this.current;
  }

  private async refresh(now: () => number): Promise<void> {
    const sent = this.entry.access_token;
    // Another tollgate command may have refreshed already (with rotating refresh tokens, ours is then spent):
    // its tokens are taken, unless they are the ones the server just refused.
    const onDisk = findLogin(this.entry.url, this.path);
    if (onDisk && onDisk.access_token !== sent) {
      const expiry = expiryOf(onDisk);
      if (expiry === undefined || now() < expiry - margin(onDisk, expiry)) {
        this.entry = onDisk;
        this.stale = false;
        return;
      }
    }
    const latest = onDisk ?? this.entry;
    if (!latest.refresh_token)
      throw new LoginExpiredError(
        `your login at ${this.entry.url} has expired and the provider gave no refresh token: run tollgate login again`,
      );
    try {
      const config = await discover(latest.issuer, latest.clientId);
      const tokens = await refresh(config, latest.refresh_token);
      this.entry = toEntry(latest, tokens, now());
    } catch (e) {
      const why = e instanceof ProviderError ? e.message : String(e);
      throw new LoginExpiredError(
        `your login at ${this.entry.url} could not be refreshed (${why}): run tollgate login again`,
      );
    }
    this.stale = false;
    saveLogin(this.entry, this.path);
  }
}
