import { CanActivate, createParamDecorator, ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { Principal } from '../../domain/shared/actor';
import { DomainError } from '../../domain/shared/domain-error';
import { InvalidTokenError, JwtVerifier } from '../../infrastructure/auth/jwt-verifier';

export const PUBLIC = 'tollgate:public';
export const ROLES = 'tollgate:roles';

/** No bearer token needed (health, JWKS, metrics, docs; Slack's signature is its own credential). */
export const Public = () => SetMetadata(PUBLIC, true);
/** The caller needs one of these roles (403 otherwise). Routes on a resource check after lookup instead. */
export const Roles = (...roles: string[]) => SetMetadata(ROLES, roles);

export class UnauthenticatedError extends DomainError {
  constructor(detail: string) {
    super('unauthenticated', 'unauthenticated', detail);
  }
}

export class ForbiddenError extends DomainError {
  constructor(detail: string) {
    super('forbidden', 'forbidden', detail);
  }
}

type AuthedRequest = Request & { principal?: Principal };

@Injectable()
export class AuthGuard implements CanActivate {
  constructor(private readonly reflector: Reflector, @Inject(JwtVerifier) private readonly verifier: JwtVerifier) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const targets = [ctx.getHandler(), ctx.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC, targets)) return true;
    const req = ctx.switchToHttp().getRequest<AuthedRequest>();
    const header = req.headers.authorization;
    const m = typeof header === 'string' ? /^Bearer\s+([A-Za-z0-9_\-.=]+)$/i.exec(header.trim()) : null;
    if (!m) throw unauthenticated('Send Authorization: Bearer <JWT>');
    try {
      req.principal = await this.verifier.verify(m[1]);
    } catch (e) {
      if (e instanceof InvalidTokenError) throw unauthenticated(`Invalid token: ${e.message}`);
      throw e;
    }
    const roles = this.reflector.getAllAndOverride<string[] | undefined>(ROLES, targets);
    if (roles && !req.principal.roles.some((r) => roles.includes(r))) {
      throw new ForbiddenError(`This needs one of the roles: ${roles.join(', ')}`);
    }
    return true;
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
