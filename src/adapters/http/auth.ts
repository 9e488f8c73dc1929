import { CanActivate, createParamDecorator, ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { decodeJwt } from 'jose';
import { Principal, hasAnyRole, isAgent } from '../../domain/shared/actor';
import { DomainError } from '../../domain/shared/domain-error';
import { CLOCK_TOLERANCE_S, InvalidTokenError, JwtVerifier } from '../../infrastructure/auth/jwt-verifier';
import { WebSessions } from '../../infrastructure/auth/web-sessions';
import { readCookie } from '../sso/cookies';
import { AuthFailureLimiter } from '../api/auth-failures';
import { ForbiddenError, UnauthenticatedError } from '../api/errors';

export const PUBLIC = 'tollgate:public';
export const ROLES = 'tollgate:roles';

/** No bearer token needed (health, JWKS, metrics, docs; Slack's signature is its own credential). */
export const Public = () => SetMetadata(PUBLIC, true);
/** The roles CONTRACT §2 knows. A token with none of them (no roles, or only unknown ones) reads no tenant-wide data. */
export const TENANT_ROLES = ['agent', 'approver', 'admin', 'auditor'] as const;

/** The caller needs one of these roles (403 otherwise). Routes on a resource check after lookup instead. */
export const Roles = (...roles: string[]) => SetMetadata(ROLES, roles);

/**
 * How a request proved who it is, for what stays open after the guard ran (the event stream): a bearer token ends
 * at its `exp`; a session when it is signed out, expires or idles out.
 */
export type Credential =
  | { kind: 'bearer'; /** When the token is no longer accepted. */ expiresAt?: Date }
  | { kind: 'session'; cookie: string };

type AuthedRequest = FastifyRequest & { principal?: Principal; credential?: Credential };

/** The web sessions of single sign-on, or null when it is not configured (then no cookie is ever read). */
export const WEB_SESSIONS = Symbol('WebSessions');
/** Methods that change state: made with a session cookie, they must carry the session's X-CSRF-Token. */
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Establishes the principal of every non-public route (REST and the event stream alike) and checks `@Roles`.
 * The principal's roles come from JwtVerifier, which keeps an agent token an agent whatever else it claims, or,
 * without a bearer token, from the single sign-on session the cookie names (people only: no session is ever made
 * for an agent). A bearer token wins over a cookie: a program's header says who it means to be.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(JwtVerifier) private readonly verifier: JwtVerifier,
    /** Shared with gRPC: an address has one budget of failures, whichever way it knocks. */
    @Inject(AuthFailureLimiter) private readonly failures: AuthFailureLimiter,
    @Inject(WEB_SESSIONS) private readonly sessions: WebSessions | null,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const targets = [ctx.getHandler(), ctx.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC, targets)) return true;
    const req = ctx.switchToHttp().getRequest<AuthedRequest>();
    const address = req.ip ?? req.socket.remoteAddress;
    const header = req.headers.authorization;
    const m = typeof header === 'string' ? /^Bearer\s+([A-Za-z0-9_\-.=]+)$/i.exec(header.trim()) : null;
    // A token verified before passes whatever the address's failures: only failures are counted against it.
    const known = m ? this.verifier.remembered(m[1]) : undefined;
    const cookie = !header && this.sessions ? readCookie(req, this.sessions.cookieName) : undefined;
    if (known) {
      req.principal = known;
      req.credential = bearer(m![1]);
    } else if (cookie !== undefined) {
      req.principal = await this.fromSession(req, cookie, address);
      req.credential = { kind: 'session', cookie };
    } else {
      this.failures.check(address); // before a new token is verified: a flood of bad tokens costs no crypto
      if (!m) {
        this.failures.recordFailure(address);
        throw unauthenticated('Send Authorization: Bearer <JWT>');
      }
      try {
        req.principal = await this.verifier.verify(m[1]);
        req.credential = bearer(m[1]);
      } catch (e) {
        if (!(e instanceof InvalidTokenError)) throw e;
        this.failures.recordFailure(address);
        throw unauthenticated(`Invalid token: ${e.message}`);
      }
    }
    const roles = this.reflector.getAllAndOverride<string[] | undefined>(ROLES, targets);
    if (roles && !hasAnyRole(req.principal, roles)) {
      const agent = isAgent(req.principal)
        ? 'An agent token acts only as an agent, whatever other roles it carries. '
        : '';
      throw new ForbiddenError(`${agent}This needs one of the roles: ${roles.join(', ')}`);
    }
    return true;
  }

  /** The session cookie's principal; the session's CSRF token is required on anything that changes state. */
  private async fromSession(req: AuthedRequest, cookie: string, address: string | undefined): Promise<Principal> {
    this.failures.check(address);
    const session = await this.sessions!.find(cookie);
    if (!session) {
      this.failures.recordFailure(address);
      throw unauthenticated('Your session has ended (signed out, expired or idle too long): sign in again');
    }
    if (STATE_CHANGING.has(req.method) && !this.sessions!.csrfMatches(session, req.headers['x-csrf-token']))
      throw new DomainError(
        'csrf_failed',
        'forbidden',
        "A request made with the session cookie that changes anything must carry the session's X-CSRF-Token header",
      );
    return { ...session.principal, roles: [...session.principal.roles] };
  }
}

/**
 * When a verified token stops being accepted: its `exp` plus the clock tolerance the verifier grants (ended any
 * sooner, a stream would only be reopened with the same token). jose checked `exp` is a number; it is read again.
 */
function bearer(token: string): Credential {
  try {
    const exp = decodeJwt(token).exp;
    return {
      kind: 'bearer',
      ...(typeof exp === 'number' ? { expiresAt: new Date((exp + CLOCK_TOLERANCE_S) * 1000) } : {}),
    };
  } catch {
    return { kind: 'bearer' };
  }
}

function unauthenticated(detail: string): DomainError {
  return new UnauthenticatedError(detail);
}

export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const p = ctx.switchToHttp().getRequest<AuthedRequest>().principal;
  if (!p) throw new UnauthenticatedError('Not authenticated');
  return p;
});

/** How the request authenticated (see Credential); undefined on a public route. */
export const CurrentCredential = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): Credential | undefined =>
    ctx.switchToHttp().getRequest<AuthedRequest>().credential,
);
