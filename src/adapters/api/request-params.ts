import { Channel } from '../../domain/shared/actor';
import { ValidationError } from '../../domain/shared/domain-error';
import { ID_PATTERN } from './dto/conversation.dto';

// Query parameters, headers and metadata read the same way by every transport.

/** What an id in a path may be: 1 to 128 characters of [A-Za-z0-9_.:-]. */
export { ID_PATTERN };

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

/** One query parameter as a single string: a repeated parameter is refused rather than guessed. */
function single(name: string, raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string')
    throw new ValidationError([{ path: name, message: 'must be given once, as a plain value' }]);
  return raw;
}

export function intParam(name: string, raw: unknown, min: number, max: number, fallback: number): number {
  const s = single(name, raw);
  if (s === undefined || s === '') return fallback;
  if (!/^\d+$/.test(s) || Number(s) < min || Number(s) > max) {
    throw new ValidationError([{ path: name, message: `must be a whole number from ${min} to ${max}` }]);
  }
  return Number(s);
}

export function listParams(query: Record<string, unknown>): { cursor?: string; limit: number } {
  const cursor = single('cursor', query.cursor) || undefined;
  return { cursor, limit: intParam('limit', query.limit, 1, MAX_LIMIT, DEFAULT_LIMIT) };
}

/**
 * A repeatable parameter of ids (`?externalId=a&externalId=b`): 1 to `max` values, each 1 to 128 characters of
 * [A-Za-z0-9_.:-]; absent, undefined.
 */
export function idsParam(name: string, raw: unknown, max: number): string[] | undefined {
  if (raw === undefined) return undefined;
  const values: unknown[] = Array.isArray(raw) ? raw : [raw];
  if (values.length === 0 || values.length > max)
    throw new ValidationError([{ path: name, message: `must be given 1 to ${max} times` }]);
  if (values.some((v) => typeof v !== 'string' || !ID_PATTERN.test(v)))
    throw new ValidationError([{ path: name, message: 'must be 1 to 128 characters of [A-Za-z0-9_.:-] each' }]);
  return values as string[];
}

export function enumParam<T extends string>(name: string, raw: unknown, values: readonly T[]): T | undefined {
  const s = single(name, raw);
  if (s === undefined || s === '') return undefined;
  if (!(values as readonly string[]).includes(s))
    throw new ValidationError([{ path: name, message: `must be one of: ${values.join(', ')}` }]);
  return s as T;
}

const REST_CHANNELS = ['web', 'cli', 'api', 'mcp'] as const satisfies readonly Channel[];
/** What a person may name in `x-tollgate-channel` over gRPC: where they decided. Slack and the policy are never a caller's to claim. */
const GRPC_CHANNELS = ['grpc', 'cli', 'web', 'mcp'] as const satisfies readonly Channel[];

/** `decision.by.via` for REST comes from X-Tollgate-Channel (web, cli, api, mcp; default api). */
export function channelHeader(raw: string | string[] | undefined): Channel {
  if (raw === undefined || raw === '') return 'api';
  const v = Array.isArray(raw) ? raw[0] : raw;
  const c = v.trim().toLowerCase();
  if (!(REST_CHANNELS as readonly string[]).includes(c)) {
    throw new ValidationError([{ path: 'X-Tollgate-Channel', message: `must be one of: ${REST_CHANNELS.join(', ')}` }]);
  }
  return c as Channel;
}

/** `decision.by.via` for gRPC comes from the `x-tollgate-channel` metadata (grpc, cli, web, mcp; default grpc). */
export function channelMetadata(raw: string | undefined): Channel {
  return enumParam('x-tollgate-channel', raw?.trim().toLowerCase() || undefined, GRPC_CHANNELS) ?? 'grpc';
}
