import { DynamicModule, Module } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { WebSessions } from '../../infrastructure/auth/web-sessions';
import { TollgateConfig } from '../../infrastructure/config/config';
import { WEB_SESSIONS } from '../http/auth';
import { servedOverHttps, sessionCookie } from '../sso/cookies';
import { SSO_OPTIONS, SsoController, SsoOptions } from '../sso/sso.controller';
import { WebAssets } from './web-assets';
import { WEB_OPTIONS, WebController, WebOptions } from './web.controller';

/**
 * Serves the web inbox and its single sign-on (`/auth/*`). Its front-end source is `web/` (Preact + esbuild); see
 * docs/WEB.md and docs/AUTH.md. Exports the web sessions, which the global AuthGuard reads.
 */
@Module({})
export class WebModule {
  static forRoot(config: TollgateConfig, assets: WebAssets = WebAssets.load()): DynamicModule {
    const oidc = config.oidc;
    const options: WebOptions = {
      // Minted tokens are for the embedded default without a provider: with single sign-on people use it.
      devSignIn: config.auth.devSecret && !oidc,
      secret: config.auth.devSecret && !oidc ? config.auth.secret : undefined,
      issuer: config.auth.issuer,
      audience: config.auth.audience,
      maxTtlSeconds: config.auth.maxTtlSeconds,
      sso: oidc ? { provider: oidc.providerName } : null,
    };
    const sso: SsoOptions = { oidc, publicUrl: config.publicUrl, host: config.host };
    return {
      module: WebModule,
      controllers: [WebController, SsoController],
      providers: [
        { provide: WebAssets, useValue: assets },
        { provide: WEB_OPTIONS, useValue: options },
        { provide: SSO_OPTIONS, useValue: sso },
        {
          provide: WEB_SESSIONS,
          // The database is the application's (provided by AppModule): looked up once a session is first needed.
          useFactory: (ref: ModuleRef) =>
            oidc
              ? new WebSessions(() => ref.get(DataSource, { strict: false }), {
                  ttlSeconds: oidc.sessionTtlSeconds,
                  idleSeconds: oidc.sessionIdleSeconds,
                  cookieName: sessionCookie(servedOverHttps(config.publicUrl)),
                })
              : null,
          inject: [ModuleRef],
        },
      ],
      exports: [WEB_SESSIONS],
    };
  }
}
