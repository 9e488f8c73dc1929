import type { Provider, Type } from '@nestjs/common';
import type { TollgateConfig } from '../../infrastructure/config/config';

/** Web Push's part of the composition (adapters/channels.ts): its controllers, providers and approval callbacks. */
export function pushControllers(_config: TollgateConfig): Type[] {
  return [];
}

export function pushProviders(_config: TollgateConfig): Provider[] {
  return [];
}

/** The ApprovalCallback classes push registers (each driven by its own outbox bridge). */
export function pushCallbacks(_config: TollgateConfig): Type[] {
  return [];
}
