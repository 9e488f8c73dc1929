import { Inject, Injectable, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';

/**
 * The address people reach this service at, for links sent to them (email, push): TOLLGATE_PUBLIC_URL, else the
 * address it listens on (read from the listening server, so a port chosen at start is the one named). Never a
 * request's Host header: whoever sent a request must not choose where others' links point.
 */
@Injectable()
export class PublicAddress {
  constructor(
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
    @Optional() private readonly http?: HttpAdapterHost,
  ) {}

  get configured(): boolean {
    return this.config.publicUrl !== undefined;
  }

  url(): string {
    if (this.config.publicUrl) return this.config.publicUrl;
    const address: unknown = this.http?.httpAdapter?.getHttpServer()?.address();
    const port =
      address && typeof address === 'object' && 'port' in address
        ? (address as { port: number }).port
        : this.config.port;
    const host = this.config.host === '0.0.0.0' || this.config.host === '::' ? 'localhost' : this.config.host;
    return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  }
}
