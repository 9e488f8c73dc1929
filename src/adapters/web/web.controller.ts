import { Body, Controller, Get, Header, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/shared/domain-error';
import { DEFAULT_MAX_TTL_S, mintToken } from '../../infrastructure/auth/jwt-verifier';
import { Public } from '../http/auth';
import { parseBody } from '../api/validation';
import { DevTokenRequest } from './dev-token.request';
import { RootFile, WebAsset, WebAssets } from './web-assets';
import { ForbiddenError } from '../api/errors';

export const WEB_OPTIONS = Symbol('WebOptions');

export interface WebOptions {
  /** The secret was generated for local development (embedded mode, no auth configured): dev sign-in is offered. */
  devSignIn: boolean;
  /** Signs dev sign-in tokens; only read when `devSignIn`. */
  secret?: string;
  /** Dev tokens carry the configured issuer and audience, and live no longer than the server accepts. */
  issuer?: string;
  audience?: string;
  maxTtlSeconds?: number;
  /** Single sign-on: the page offers "Sign in with <provider>" (GET /auth/login); null without it. */
  sso: { provider: string } | null;
}

const DEV_TOKEN_TTL_S = 8 * 3600;

/**
 * No inline script or style, no other origin: the page talks to this service only. Its service worker (/sw.js) and
 * web app manifest are this origin's too.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function securityHeaders(res: FastifyReply): void {
  res.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.header('X-Content-Type-Options', 'nosniff');
  res.header('Referrer-Policy', 'no-referrer');
  res.header('X-Frame-Options', 'DENY');
  res.header('Cross-Origin-Opener-Policy', 'same-origin');
  res.header('Cross-Origin-Resource-Policy', 'same-origin');
}

function send(req: FastifyRequest, res: FastifyReply, asset: WebAsset, cacheControl: string): void {
  securityHeaders(res);
  res.header('Cache-Control', cacheControl);
  res.header('ETag', asset.etag);
  const known = String(req.headers['if-none-match'] ?? '')
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''));
  if (known.includes(asset.etag) || known.includes('*')) {
    res.code(304).send();
    return;
  }
  res.type(asset.contentType).send(asset.body);
}

/** Only a browser on this machine may use the dev sign-in, even should dev mode listen on another address. */
export function isLoopback(address: string | undefined): boolean {
  return !!address && (address === '::1' || /^(::ffff:)?127\./.test(address));
}

/**
 * DNS rebinding: a page of attacker.example whose name is made to resolve to 127.0.0.1 reaches this server from
 * loopback, but its requests still name attacker.example in `Host` (and `Origin`). Only a loopback name with the
 * port this server listens on is this server.
 */
export function isLocalRequest(req: Pick<FastifyRequest, 'headers' | 'socket'>): boolean {
  const port = req.socket.localPort;
  const host = req.headers.host;
  if (typeof host !== 'string' || !isLoopbackAuthority(host, port)) return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true; // not a cross-origin browser request; Host already names this server
  try {
    const u = new URL(origin);
    return u.protocol === 'http:' && u.origin === origin && isLoopbackAuthority(u.host, port);
  } catch {
    return false; // "null" (sandboxed frames, file:) and anything unparseable
  }
}

function isLoopbackAuthority(authority: string, port: number | undefined): boolean {
  const m = /^(localhost|127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?$/i.exec(authority);
  return !!m && (m[2] === undefined ? 80 : Number(m[2])) === port;
}

function notFound(what: string): DomainError {
  return new DomainError('not_found', 'not_found', what);
}

/**
 * The web inbox (CONTRACT §10): `GET /` and its hashed assets, built by `npm run build` into `dist/web`,
 * plus the two small routes the page needs before it holds a token: what sign-in it may offer, and in
 * embedded dev mode a token for a chosen name and roles. Everything else the page does goes through /v1.
 */
@ApiExcludeController()
@Controller()
export class WebController {
  constructor(
    private readonly assets: WebAssets,
    @Inject(WEB_OPTIONS) private readonly options: WebOptions,
  ) {}

  @Get()
  @Public()
  index(@Req() req: FastifyRequest, @Res() res: FastifyReply): void {
    const index = this.assets.index;
    if (!index)
      throw new DomainError(
        'unavailable',
        'unavailable',
        `The web inbox is not built (nothing in ${this.assets.dir}): run npm run build`,
      );
    send(req, res, index, 'no-cache'); // always revalidated, so a new build's asset names are picked up at once
  }

  @Get('assets/:file')
  @Public()
  asset(@Param('file') file: string, @Req() req: FastifyRequest, @Res() res: FastifyReply): void {
    const asset = this.assets.get(file);
    if (!asset) throw notFound(`No web asset named ${file}`);
    send(req, res, asset, 'public, max-age=31536000, immutable'); // the name carries the content hash
  }

  /**
   * The service worker, at the root so its scope is the whole inbox. Revalidated every time, so a new build's worker
   * (which browsers also check for themselves at least daily) replaces the old one at once.
   */
  @Get('sw.js')
  @Public()
  worker(@Req() req: FastifyRequest, @Res() res: FastifyReply): void {
    send(req, res, this.rootFile('sw.js'), 'no-cache');
  }

  /** The web app manifest: what makes the inbox installable (a phone's home screen, where push works on iOS). */
  @Get('manifest.webmanifest')
  @Public()
  manifest(@Req() req: FastifyRequest, @Res() res: FastifyReply): void {
    send(req, res, this.rootFile('manifest.webmanifest'), 'no-cache');
  }

  @Get('ui/config')
  @Public()
  @Header('Cache-Control', 'no-store')
  config(@Req() req: FastifyRequest) {
    return { devSignIn: this.devSignInFor(req) && isLocalRequest(req), sso: this.options.sso };
  }

  /** Embedded dev mode only, from this machine only; 404 whenever real authentication or single sign-on is configured. */
  @Post('ui/dev-token')
  @Public()
  @HttpCode(201)
  @Header('Cache-Control', 'no-store')
  async devToken(@Req() req: FastifyRequest, @Body() body: unknown) {
    if (this.options.sso)
      throw notFound(
        `Dev sign-in is off because single sign-on (TOLLGATE_OIDC_ISSUER) is configured: sign in with ${this.options.sso.provider} (GET /auth/login)`,
      );
    if (!this.devSignInFor(req) || !this.options.secret)
      throw notFound('Dev sign-in exists only in embedded dev mode (no TOLLGATE_JWT_SECRET or TOLLGATE_JWKS_URL)');
    if (!isLocalRequest(req))
      throw new ForbiddenError(
        'Dev sign-in answers only pages served from this server on localhost, 127.0.0.1 or [::1] (Host and Origin must name it)',
      );
    const dto = parseBody(DevTokenRequest, body);
    const roles = [...new Set(dto.roles)];
    const { secret, issuer, audience, maxTtlSeconds } = this.options;
    const ttl = Math.min(DEV_TOKEN_TTL_S, maxTtlSeconds ?? DEFAULT_MAX_TTL_S);
    const token = await mintToken(
      secret,
      { sub: dto.sub, roles, tenant: dto.tenant, name: dto.name || undefined },
      `${ttl}s`,
      { issuer, audience },
    );
    return { token };
  }

  private rootFile(name: RootFile): WebAsset {
    const file = this.assets.root(name);
    if (!file)
      throw new DomainError(
        'unavailable',
        'unavailable',
        `The web inbox is not built (no ${name} in ${this.assets.dir}): run npm run build`,
      );
    return file;
  }

  private devSignInFor(req: FastifyRequest): boolean {
    return this.options.devSignIn && isLoopback(req.socket.remoteAddress);
  }
}
