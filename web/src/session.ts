/**
 * Who is signed in: the bearer token and the claims the page shows (the server checks the token; the page only
 * reads it), or a single sign-on session the server holds, named by an HttpOnly cookie the page never sees.
 */
export interface Session {
  /** A pasted or dev-minted token; empty for a single sign-on session. */
  token: string;
  /** Single sign-on: the session's CSRF token, sent as X-CSRF-Token (the cookie itself goes by itself). */
  csrfToken?: string;
  sub: string;
  name?: string;
  /** The email the token or sign-on carries, when it does: a policy may name a person by it (`person:<email>`). */
  email?: string;
  roles: string[];
  tenant: string;
  /** Seconds since the epoch; tokens must carry it (CONTRACT §2). */
  exp?: number;
}

const KEY = 'tollgate.token';

/** Reads the claims of a JWT without checking it (the API does that on every request); null when it is not one. */
export function sessionFromToken(raw: string): Session | null {
  const token = raw.trim().replace(/^Bearer\s+/i, '');
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const json = atob(
      parts[1]
        .replace(/-/g, '+')
        .replace(/_/g, '/')
        .padEnd(Math.ceil(parts[1].length / 4) * 4, '='),
    );
    const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0)))) as Record<
      string,
      unknown
    >;
    if (typeof claims.sub !== 'string') return null;
    const roles = Array.isArray(claims.roles) ? claims.roles.filter((r): r is string => typeof r === 'string') : [];
    return {
      token,
      sub: claims.sub,
      name: typeof claims.name === 'string' ? claims.name : undefined,
      email: typeof claims.email === 'string' ? claims.email : undefined,
      roles,
      tenant: typeof claims.tenant === 'string' ? claims.tenant : 'default',
      exp: typeof claims.exp === 'number' ? claims.exp : undefined,
    };
  } catch {
    return null;
  }
}

/** The tab's session (sessionStorage), or one remembered on this device (localStorage). */
export function loadSession(): Session | null {
  const raw = sessionStorage.getItem(KEY) ?? localStorage.getItem(KEY);
  const s = raw ? sessionFromToken(raw) : null;
  if (s?.exp && s.exp * 1000 < Date.now()) {
    clearSession();
    return null;
  }
  return s;
}

export function saveSession(s: Session, remember: boolean): void {
  sessionStorage.setItem(KEY, s.token);
  if (remember) localStorage.setItem(KEY, s.token);
  else localStorage.removeItem(KEY);
}

export function clearSession(): void {
  sessionStorage.removeItem(KEY);
  localStorage.removeItem(KEY);
}

/** The single sign-on session of this browser (GET /auth/session), or null when there is none. */
export async function loadSsoSession(): Promise<Session | null> {
  let res: Response;
  try {
    res = await fetch('/auth/session', { headers: { accept: 'application/json' }, cache: 'no-store' });
  } catch {
    return null;
  }
  if (!res.ok) return null;
  const body = (await res.json()) as {
    sub: string;
    name?: string;
    email?: string;
    roles: string[];
    tenant: string;
    csrfToken: string;
    expiresAt: string;
  };
  return {
    token: '',
    csrfToken: body.csrfToken,
    sub: body.sub,
    name: body.name,
    email: body.email,
    roles: body.roles,
    tenant: body.tenant,
    exp: Math.floor(Date.parse(body.expiresAt) / 1000),
  };
}

/** Ends a single sign-on session here, then goes where the server says (the provider's logout, or back to the inbox). */
export async function endSsoSession(s: Session): Promise<void> {
  let to = '/';
  try {
    const res = await fetch('/auth/logout', { method: 'POST', headers: { 'X-CSRF-Token': s.csrfToken ?? '' } });
    if (res.ok) to = ((await res.json()) as { redirectTo?: string }).redirectTo ?? '/';
  } catch {
    // Unreachable: the page still leaves; the session ends by itself at its idle timeout.
  }
  window.location.assign(to);
}

export const isSso = (s: Session): boolean => s.csrfToken !== undefined;

export const displayName = (s: Session): string => s.name ?? s.sub;
export const canReadAudit = (s: Session): boolean => s.roles.includes('auditor') || s.roles.includes('admin');
