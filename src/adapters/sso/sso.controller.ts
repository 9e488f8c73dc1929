import { Controller, Get, Header, HttpCode, Inject, Logger, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/shared/domain-error';
import { mapClaims } from '../../infrastructure/auth/claims-mapping';
import { WebSessions } from '../../infrastructure/auth/web-sessions';
import type { OidcConfig } from '../../infrastructure/config/config';
import { Public, WEB_SESSIONS } from '../http/auth';
import { clearCookie, hasLoginCookie, loginCookie, printable, readCookie, servedOverHttps, setCookie } from './cookies';
import { LOGIN_TTL_S, LoginSealer } from './login-cookie';
import { BACK_TO_SIGN_IN, sendPage } from './pages';
import { CallbackError, RelyingParty } from './relying-party';

export const SSO_OPTIONS = Symbol('SsoOptions');

export interface SsoOptions {
  oidc?: OidcConfig;
  /** TOLLGATE_PUBLIC_URL; unset: the loopback address the server listens on (config refuses anything else). */
  publicUrl?: string;
  host: string;
}

const CALLBACK_PATH = '/auth/callback';
const MAX_RETURN_TO = 2048;
/** Groups logged on a refused sign-in, each cut to MAX_LOGGED_CHARS: enough to tell why, never the whole claim. */
const MAX_LOGGED_GROUPS = 20;
const MAX_LOGGED_CHARS = 64;

/**
 * Single sign-on for the web inbox (OpenID Connect, authorization code flow with PKCE) and the public description
 * of it the CLI reads. Without TOLLGATE_OIDC_ISSUER only `/auth/config` answers (`{"oidc": null}`).
 */
@ApiExcludeController()
@Controller('auth')
export class SsoController {
  private readonly logger = new Logger('SingleSignOn');
  private readonly rp?: RelyingParty;
  private readonly sealer?: LoginSealer;

  constructor(
    @Inject(SSO_OPTIONS) private readonly options: SsoOptions,
    @Inject(WEB_SESSIONS) private readonly sessions: WebSessions | null,
  ) {
    if (options.oidc) {
      this.rp = new RelyingParty(options.oidc);
      this.sealer = new LoginSealer(options.oidc.clientSecret);
    }
  }

  /** What `tollgate login --url` needs to sign in with the provider (its public client): no secret in it. */
  @Get('config')
  @Public()
  @Header('Cache-Control', 'no-store')
  config() {
    const o = this.options.oidc;
    return { oidc: o ? { issuer: o.issuer, clientId: o.cliClientId, scopes: o.scopes } : null };
  }

  /** Starts a sign-in: a fresh state, nonce and PKCE verifier sealed in a cookie, then off to the provider. */
  @Get('login')
  @Public()
  async login(
    @Req() req: FastifyRequest,
    @Res() res: FastifyReply,
    @Query('return_to') returnTo?: unknown,
    @Query('prompt') prompt?: unknown,
  ): Promise<void> {
    const { rp, sealer } = this.enabled();
    const back = sameOriginPath(returnTo);
    if (back === undefined)
      throw new DomainError(
        'invalid_return_to',
        'invalid',
        `return_to must be a path on this server (starting with a single /, at most ${MAX_RETURN_TO} characters)`,
      );
    if (prompt !== undefined && prompt !== 'login')
      throw new DomainError('invalid_prompt', 'invalid', 'prompt may only be login (the provider asks who signs in)');
    // Without TOLLGATE_PUBLIC_URL the callback is on the address the server listens on (127.0.0.1): a sign-in begun
    // at another name of it (localhost) would set its login cookie where the callback never looks. Begun there
    // instead. (Behind TOLLGATE_PUBLIC_URL a proxy may rename the host: nothing is redirected.)
    const origin = this.options.publicUrl ? undefined : new URL(this.base(req));
    if (origin && req.headers.host?.toLowerCase() !== origin.host) {
      res
        .header('Cache-Control', 'no-store')
        .redirect(`${origin.origin}/auth/login${new URL(req.originalUrl, origin).search}`, 303);
      return;
    }
    let started: Awaited<ReturnType<RelyingParty['loginUrl']>>;
    try {
      started = await rp.loginUrl(this.base(req) + CALLBACK_PATH, back, prompt);
    } catch (e) {
      if (!(e instanceof CallbackError)) throw e;
      this.logger.warn(e.message);
      return sendPage(res, 503, {
        title: 'The identity provider cannot be reached',
        detail: e.message,
        code: e.code,
      });
    }
    const login = loginCookie(started.transaction.state, this.secure());
    setCookie(res, login.name, sealer.seal(started.transaction), {
      path: login.path,
      maxAgeSeconds: LOGIN_TTL_S,
      secure: this.secure(),
    });
    res.header('Cache-Control', 'no-store').redirect(started.url, 303);
  }

  /**
   * The provider's answer. The login cookie its state names is cleared whatever happens (one transaction, one
   * callback); then the answer is checked against it (state, PKCE, nonce), the claims mapped, and a session made for
   * a person with a role. Anything else is a plain page with a stable code, and no session.
   */
  @Get('callback')
  @Public()
  async callback(@Req() req: FastifyRequest, @Res() res: FastifyReply): Promise<void> {
    const { rp, sealer } = this.enabled();
    const secure = this.secure();
    const url = new URL(req.originalUrl, this.base(req));
    const state = url.searchParams.get('state');
    const login = state && state.length <= 512 ? loginCookie(state, secure) : undefined;
    const name = login?.name;
    if (login) clearCookie(res, login.name, { path: login.path, secure });
    const sealed = name ? readCookie(req, name) : undefined;
    const transaction = sealed ? sealer.open(sealed) : undefined;
    if (!transaction) {
      if (!sealed && hasLoginCookie(req))
        return this.refuse(res, 400, {
          title: 'Sign-in refused',
          detail: 'This sign-in answer does not belong to any sign-in this browser began (its state is unknown here).',
          code: 'state_mismatch',
        });
      return this.refuse(res, 400, {
        title: 'This sign-in cannot be finished',
        detail: sealed
          ? 'The sign-in this browser began was not recognised: it was changed, or it is more than 10 minutes old. Sign in again.'
          : // A sign-in begun at another address of this service (its cookie is that address's) ends up here too.
            `This browser has no sign-in under way at ${this.base(req)} (it was finished already, or began at another address of Tollgate). Sign in again from ${this.base(req)}/.`,
        code: sealed ? 'login_invalid' : 'login_missing',
      });
    }
    let signedIn: Awaited<ReturnType<RelyingParty['finish']>>;
    try {
      const o = this.options.oidc!;
      signedIn = await rp.finish(url, transaction, [o.rolesClaim, ...('claim' in o.tenant ? [o.tenant.claim] : [])]);
    } catch (e) {
      if (!(e instanceof CallbackError)) throw e;
      return this.refuse(res, e.code === 'provider_unavailable' ? 503 : 400, {
        title: 'Sign-in refused',
        detail: e.message,
        code: e.code,
      });
    }
    const mapped = mapClaims(signedIn.claims, this.options.oidc!);
    if (!mapped.ok && mapped.code === 'bad_claims')
      return this.refuse(res, 400, { title: 'Sign-in refused', detail: mapped.detail, code: 'bad_claims' });
    if (!mapped.ok) {
      const claim = this.options.oidc!.rolesClaim;
      const page = {
        title: 'No access',
        detail: mapped.claimMissing
          ? `You signed in, but Tollgate cannot tell your role: ${mapped.detail}. Ask an administrator to fix the provider's settings.`
          : `You signed in, but your account has no role in Tollgate (approver, admin or auditor). Ask an administrator to add you to a group mapped to one. ${mapped.detail}.`,
        // Its own code: the fix is the provider's or Tollgate's settings, not the person's groups.
        code: mapped.claimMissing ? 'no_roles_claim' : 'no_access',
        links: [
          {
            href: await this.anotherAccountUrl(req, signedIn.idToken),
            text: 'Sign in with another account',
            testId: 'another-account',
          },
          BACK_TO_SIGN_IN,
        ],
      };
      // What the provider sent, so an administrator can tell why without asking the person to try again.
      const received = mapped.claimMissing
        ? `no claim "${claim}" among ${JSON.stringify(
            Object.keys(signedIn.claims)
              .slice(0, 40)
              .map((s) => printable(s, MAX_LOGGED_CHARS)),
          )}`
        : `claim "${claim}": ${JSON.stringify(mapped.groups.slice(0, MAX_LOGGED_GROUPS).map((s) => printable(s, MAX_LOGGED_CHARS)))}${
            mapped.groups.length > MAX_LOGGED_GROUPS ? ` and ${mapped.groups.length - MAX_LOGGED_GROUPS} more` : ''
          }`;
      return this.refuse(
        res,
        403,
        page,
        `sub ${JSON.stringify(printable(mapped.person.id, MAX_LOGGED_CHARS))} of tenant ${mapped.person.tenant}, ${received}`,
      );
    }
    const session = await this.sessions!.create(mapped.principal, signedIn.idToken);
    setCookie(res, this.sessions!.cookieName, session.cookie, {
      path: '/',
      maxAgeSeconds: this.options.oidc!.sessionTtlSeconds,
      secure,
    });
    this.logger.log(`${mapped.principal.id} signed in (tenant ${mapped.principal.tenant})`);
    res.header('Cache-Control', 'no-store').redirect(transaction.returnTo, 303);
  }

  /**
   * Who the session cookie signs in, and its CSRF token for the page's state-changing requests. 401 without a
   * live session (the page then shows the sign-in).
   */
  @Get('session')
  @Public()
  @Header('Cache-Control', 'no-store')
  async session(@Req() req: FastifyRequest) {
    const cookie = this.sessions ? readCookie(req, this.sessions.cookieName) : undefined;
    const session = cookie !== undefined ? await this.sessions!.find(cookie) : undefined;
    if (!session || cookie === undefined)
      throw new DomainError('unauthenticated', 'unauthenticated', 'No single sign-on session: sign in');
    const p = session.principal;
    return {
      sub: p.id,
      tenant: p.tenant,
      roles: p.roles,
      ...(p.name ? { name: p.name } : {}),
      ...(p.email ? { email: p.email } : {}),
      csrfToken: this.sessions!.csrfToken(cookie),
      expiresAt: session.expiresAt.toISOString(),
    };
  }

  /**
   * Ends the session here (row deleted, cookie cleared) and answers where the browser goes next: the provider's
   * end_session_endpoint (RP-initiated logout) when it has one, else the inbox. Needs the CSRF token, as every
   * state change made with the cookie.
   */
  @Post('logout')
  @Public()
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  async logout(@Req() req: FastifyRequest, @Res({ passthrough: true }) res: FastifyReply) {
    const { rp } = this.enabled();
    const cookie = readCookie(req, this.sessions!.cookieName);
    const session = cookie !== undefined ? await this.sessions!.find(cookie) : undefined;
    if (session && !this.sessions!.csrfMatches(session, req.headers['x-csrf-token']))
      throw new DomainError('csrf_failed', 'forbidden', "Signing out needs the session's X-CSRF-Token header");
    await this.sessions!.end(cookie);
    clearCookie(res, this.sessions!.cookieName, { path: '/', secure: this.secure() });
    const home = `${this.base(req)}/`;
    const provider = session ? await rp.logoutUrl(session.idToken, home) : undefined;
    return { redirectTo: provider ?? '/' };
  }

  private refuse(res: FastifyReply, status: number, page: Parameters<typeof sendPage>[2], why?: string): void {
    this.logger.warn(`sign-in refused: ${page.code}: ${page.detail}${why ? ` (${why})` : ''}`);
    sendPage(res, status, page);
  }

  /**
   * "Sign in with another account" from the no-access page: the provider's own session would otherwise sign the
   * same account in again, silently. RP-initiated logout at the provider, back to the sign-in page, where it has an
   * end_session_endpoint; else a sign-in with `prompt=login`, which makes the provider ask who signs in.
   */
  private async anotherAccountUrl(req: FastifyRequest, idToken: string | undefined): Promise<string> {
    return (await this.rp!.logoutUrl(idToken, `${this.base(req)}/`)) ?? '/auth/login?prompt=login';
  }

  private enabled(): { rp: RelyingParty; sealer: LoginSealer } {
    if (!this.rp || !this.sealer)
      throw new DomainError('not_found', 'not_found', 'Single sign-on is not configured (TOLLGATE_OIDC_ISSUER)');
    return { rp: this.rp, sealer: this.sealer };
  }

  /** Where people reach this service: the redirect URI's base. */
  private base(req: FastifyRequest): string {
    if (this.options.publicUrl) return this.options.publicUrl;
    const host = this.options.host.includes(':') ? `[${this.options.host}]` : this.options.host;
    return `http://${host}:${req.socket.localPort}`;
  }

  private secure(): boolean {
    return servedOverHttps(this.options.publicUrl);
  }
}

/** A path on this server, or undefined: never another origin (`//evil`, `/\evil`, `https:`), never control characters. */
export function sameOriginPath(raw: unknown): string | undefined {
  if (raw === undefined || raw === '') return '/';
  if (typeof raw !== 'string' || raw.length > MAX_RETURN_TO || !raw.startsWith('/') || /[\x00-\x1f\x7f\\]/.test(raw))
    return undefined;
  if (raw.startsWith('//')) return undefined;
  try {
    const u = new URL(raw, 'http://tollgate.invalid');
    if (u.origin !== 'http://tollgate.invalid') return undefined;
    const path = u.pathname + u.search + u.hash;
    // Checked again after the URL parser resolved `/./` and `/../`: `/.//evil` comes out as `//evil`, another host.
    return path.startsWith('//') ? undefined : path;
  } catch {
    return undefined;
  }
}
