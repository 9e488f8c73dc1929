import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Whether people reach this service over https (TOLLGATE_PUBLIC_URL says so): then every cookie it sets is
 * `Secure` and `__Host-`. Decided here once, for the session's cookie and the sign-in's alike.
 */
export function servedOverHttps(publicUrl: string | undefined): boolean {
  return !!publicUrl?.startsWith('https:');
}

/** Provider-supplied text as it may be logged or shown: printable ASCII, at most `max` characters. */
export function printable(s: string, max: number): string {
  return s.replace(/[^\x20-\x7e]/g, '?').slice(0, max);
}

/**
 * The session cookie's name. Over https it takes the `__Host-` prefix: the browser then accepts it only when set by
 * this very host, Secure, for `/`, so a sibling subdomain cannot plant a session of its own choosing.
 */
export function sessionCookie(secure: boolean): string {
  return secure ? '__Host-tollgate_session' : 'tollgate_session';
}
const LOGIN_PREFIX = 'tollgate_login_';

/**
 * The login cookie of one sign-in, named after its state: sign-ins begun in several tabs each keep their own, and a
 * callback finds its own by the `state` it carries. Over https it is `__Host-` (and so for `/`), like the session's:
 * a sibling subdomain could otherwise plant its own sign-in's cookie and have the victim finish it, signed in as
 * the attacker (login CSRF).
 */
export function loginCookie(state: string, secure: boolean): { name: string; path: string } {
  const name = LOGIN_PREFIX + createHash('sha256').update(state).digest('base64url').slice(0, 16);
  return secure ? { name: `__Host-${name}`, path: '/' } : { name, path: '/auth/callback' };
}

/** Whether any sign-in is under way in this browser (some login cookie is present). */
export function hasLoginCookie(req: Pick<FastifyRequest, 'headers'>): boolean {
  const header = req.headers.cookie;
  return (
    typeof header === 'string' &&
    header.split(';').some((p) =>
      p
        .trim()
        .replace(/^__Host-/, '')
        .startsWith(LOGIN_PREFIX),
    )
  );
}

/** One cookie's value from the Cookie header (no parser is installed for the whole app). */
export function readCookie(req: Pick<FastifyRequest, 'headers'>, name: string): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string' || header.length > 16_384) return undefined; // Node refuses larger headers anyway
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

export interface CookieOptions {
  path: string;
  maxAgeSeconds: number;
  secure: boolean;
}

/** HttpOnly and SameSite=Lax always (Lax: the provider's redirect back is a top-level GET that must carry it). */
export function setCookie(res: FastifyReply, name: string, value: string, o: CookieOptions): void {
  const parts = [
    `${name}=${value}`,
    `Path=${o.path}`,
    `Max-Age=${o.maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(o.secure ? ['Secure'] : []),
  ];
  res.header('Set-Cookie', parts.join('; ')); // Fastify adds each Set-Cookie to those already set
}

export function clearCookie(res: FastifyReply, name: string, o: Omit<CookieOptions, 'maxAgeSeconds'>): void {
  setCookie(res, name, '', { ...o, maxAgeSeconds: 0 });
}
