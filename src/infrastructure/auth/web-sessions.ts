import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Principal } from '../../domain/shared/actor';

const TENANT = /^[A-Za-z0-9_.:-]{1,128}$/;
const SECRET = /^[A-Za-z0-9_-]{43}$/;
/** last_seen_at is written at most this often per session (seconds), not on every request. */
const TOUCH_EVERY_S = 30;

export interface SessionLimits {
  ttlSeconds: number;
  idleSeconds: number;
  /** The cookie that carries a session (`__Host-` prefixed over https). */
  cookieName: string;
}

export interface WebSession {
  principal: Principal;
  /** For RP-initiated logout (`id_token_hint`). */
  idToken?: string;
  expiresAt: Date;
  csrfHash: string;
}

export interface NewSession {
  /** The cookie's value, `<tenant>.<secret>`: only the secret's hash is stored. */
  cookie: string;
  csrfToken: string;
  expiresAt: Date;
}

interface Row {
  person_id: string;
  name: string | null;
  email: string | null;
  roles: string[];
  csrf_hash: string;
  id_token: string | null;
  last_seen_at: Date;
  expires_at: Date;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('base64url');

/**
 * Web inbox sessions made by single sign-on, in `web_sessions`. The cookie is `<tenant>.<secret>`: the tenant picks
 * the partition (tenants are walls: a session is looked up in its own tenant only) and the secret's SHA-256 the row.
 * The CSRF token is derived from the secret (HMAC), so the page can be given it again after a reload and a copy of
 * the table yields neither.
 */
export class WebSessions {
  /** Who waits for a session to end on this instance, by `keyOf` its cookie. */
  private readonly endListeners = new Map<string, Set<() => void>>();

  constructor(
    private readonly db: () => DataSource,
    private readonly limits: SessionLimits,
  ) {}

  get cookieName(): string {
    return this.limits.cookieName;
  }

  async create(principal: Principal, idToken: string | undefined, now = new Date()): Promise<NewSession> {
    const secret = randomBytes(32).toString('base64url');
    const csrfToken = csrfFor(secret);
    const expiresAt = new Date(now.getTime() + this.limits.ttlSeconds * 1000);
    // Ended sessions of the tenant go as new ones are made: the table holds live sessions, give or take.
    await this.db().query(
      `DELETE FROM web_sessions WHERE tenant_id = $1 AND (expires_at <= $2 OR last_seen_at <= $3)`,
      [principal.tenant, now, new Date(now.getTime() - this.limits.idleSeconds * 1000)],
    );
    await this.db().query(
      `INSERT INTO web_sessions (tenant_id, id_hash, person_id, name, email, roles, csrf_hash, id_token,
                                 created_at, last_seen_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10)`,
      [
        principal.tenant,
        sha256(secret),
        principal.id,
        principal.name ?? null,
        principal.email ?? null,
        [...principal.roles],
        sha256(csrfToken),
        idToken ?? null,
        now,
        expiresAt,
      ],
    );
    return { cookie: `${principal.tenant}.${secret}`, csrfToken, expiresAt };
  }

  /** The live session a cookie names, its idle clock reset; undefined when unknown, expired or idle too long. */
  async find(cookie: string | undefined, now = new Date()): Promise<WebSession | undefined> {
    const parsed = parse(cookie);
    if (!parsed) return undefined;
    const rows = (await this.db().query(
      `SELECT person_id, name, email, roles, csrf_hash, id_token, last_seen_at, expires_at
         FROM web_sessions WHERE tenant_id = $1 AND id_hash = $2`,
      [parsed.tenant, sha256(parsed.secret)],
    )) as Row[];
    const row = rows[0];
    if (!row) return undefined;
    const lastSeen = new Date(row.last_seen_at).getTime();
    const expiresAt = new Date(row.expires_at);
    if (expiresAt.getTime() <= now.getTime() || lastSeen + this.limits.idleSeconds * 1000 <= now.getTime()) {
      await this.end(cookie);
      return undefined;
    }
    if (now.getTime() - lastSeen >= Math.min(TOUCH_EVERY_S, this.limits.idleSeconds / 4) * 1000)
      await this.db().query(`UPDATE web_sessions SET last_seen_at = $3 WHERE tenant_id = $1 AND id_hash = $2`, [
        parsed.tenant,
        sha256(parsed.secret),
        now,
      ]);
    return {
      principal: {
        id: row.person_id,
        tenant: parsed.tenant,
        roles: row.roles,
        ...(row.name ? { name: row.name } : {}),
        ...(row.email ? { email: row.email } : {}),
      },
      idToken: row.id_token ?? undefined,
      expiresAt,
      csrfHash: row.csrf_hash,
    };
  }

  /**
   * Whether the session a cookie names is still live, and until when at the latest (its lifetime, or its idle
   * timeout counted from when it was last used), without resetting its idle clock: an open event stream is not
   * the person doing anything. An ended one is deleted, as `find` does.
   */
  async liveUntil(cookie: string | undefined, now = new Date()): Promise<Date | undefined> {
    const parsed = parse(cookie);
    if (!parsed) return undefined;
    const rows = (await this.db().query(
      `SELECT last_seen_at, expires_at FROM web_sessions WHERE tenant_id = $1 AND id_hash = $2`,
      [parsed.tenant, sha256(parsed.secret)],
    )) as Pick<Row, 'last_seen_at' | 'expires_at'>[];
    const row = rows[0];
    if (!row) return undefined;
    const until = Math.min(
      new Date(row.expires_at).getTime(),
      new Date(row.last_seen_at).getTime() + this.limits.idleSeconds * 1000,
    );
    if (until <= now.getTime()) {
      await this.end(cookie);
      return undefined;
    }
    return new Date(until);
  }

  /**
   * Calls `listener` once when the session is ended here (signed out on this instance, or found expired): the
   * event streams opened with it close at once. Sessions ended on another instance are found by `liveUntil`.
   * Returns the unsubscribe.
   */
  onEnd(cookie: string, listener: () => void): () => void {
    const key = keyOf(cookie);
    if (key === undefined) return () => undefined;
    let set = this.endListeners.get(key);
    if (!set) this.endListeners.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.endListeners.get(key) === set) this.endListeners.delete(key);
    };
  }

  /** The session's CSRF token, from the cookie that holds it (for the page after a reload). */
  csrfToken(cookie: string): string | undefined {
    const parsed = parse(cookie);
    return parsed ? csrfFor(parsed.secret) : undefined;
  }

  /** Whether a request's X-CSRF-Token is the session's (compared in constant time). */
  csrfMatches(session: WebSession, header: unknown): boolean {
    if (typeof header !== 'string' || header.length === 0 || header.length > 128) return false;
    const a = Buffer.from(sha256(header));
    const b = Buffer.from(session.csrfHash);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  async end(cookie: string | undefined): Promise<void> {
    const parsed = parse(cookie);
    if (!parsed) return;
    await this.db().query(`DELETE FROM web_sessions WHERE tenant_id = $1 AND id_hash = $2`, [
      parsed.tenant,
      sha256(parsed.secret),
    ]);
    const key = keyOf(cookie);
    const listeners = key !== undefined ? this.endListeners.get(key) : undefined;
    if (!listeners) return;
    this.endListeners.delete(key!);
    for (const listener of listeners) listener();
  }
}

function csrfFor(secret: string): string {
  return createHmac('sha256', secret).update('tollgate csrf').digest('base64url');
}

/** A session's key in memory: its tenant and the secret's hash, never the secret itself. */
function keyOf(cookie: string | undefined): string | undefined {
  const parsed = parse(cookie);
  return parsed ? `${parsed.tenant}.${sha256(parsed.secret)}` : undefined;
}

function parse(cookie: string | undefined): { tenant: string; secret: string } | undefined {
  if (!cookie || cookie.length > 200) return undefined;
  const at = cookie.lastIndexOf('.');
  const tenant = cookie.slice(0, at);
  const secret = cookie.slice(at + 1);
  return at > 0 && TENANT.test(tenant) && SECRET.test(secret) ? { tenant, secret } : undefined;
}
