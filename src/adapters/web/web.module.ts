import { DynamicModule, Module } from '@nestjs/common';
import { TollgateConfig } from '../../infrastructure/config/config';
import { WebAssets } from './web-assets';
import { WEB_OPTIONS, WebController, WebOptions } from './web.controller';

/** Serves the web inbox. Its front-end source is `web/` (Preact + esbuild); see docs/WEB.md. */
@Module({})
export class WebModule {
  static forRoot(config: TollgateConfig, assets: WebAssets = WebAssets.load()): DynamicModule {
    const options: WebOptions = {
      devSignIn: config.auth.devSecret,
      secret: config.auth.devSecret ? config.auth.secret : undefined,
      issuer: config.auth.issuer,
      audience: config.auth.audience,
      maxTtlSeconds: config.auth.maxTtlSeconds,
    };
    return {
      module: WebModule,
      controllers: [WebController],
      providers: [
        { provide: WebAssets, useValue: assets },
        { provide: WEB_OPTIONS, useValue: options },
      ],
    };
  }
}
