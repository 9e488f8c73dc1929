import { BadRequestException } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { DomainError } from '../../domain/shared/domain-error';

export interface BodyParsing {
  /** Bytes a body may have, compressed or not. */
  limit: number;
  /** Media types taken as text (YAML policies); JSON is application/json and application/*+json. */
  textTypes: string[];
  /** Routes whose handler reads the exact bytes (`request.rawBody`) and nothing parsed (Slack's signed posts). */
  rawBodyRoutes: string[];
}

type RawBodyRequest = FastifyRequest & { rawBody?: Buffer };

const JSON_TYPE = /^application\/([^/;\s]+\+)?json(\s*;|$)/i;
const UNSUPPORTED = 'Send JSON (application/json), or YAML (application/yaml) for a policy';

/**
 * The request bodies the service takes, as Express's body parsers took them: JSON objects and arrays (strict), text
 * for YAML, gzip/deflate/br bodies inflated, within one limit. Any other body is refused with 415 rather than
 * reaching a handler as "no body"; a body without a Content-Type reaches it as none. Errors become problems.
 */
export function useBodyParsers(fastify: FastifyInstance, o: BodyParsing): void {
  fastify.removeAllContentTypeParsers();
  const raw = new Set(o.rawBodyRoutes);
  const parse =
    (as: 'json' | 'text' | 'other') =>
    (req: FastifyRequest, body: Buffer, done: (err: Error | null, body?: unknown) => void): void => {
      try {
        if (req.routeOptions.url !== undefined && raw.has(req.routeOptions.url)) {
          (req as RawBodyRequest).rawBody = body; // signed bytes: as sent, before anything reads them
          return done(null, {});
        }
        if (as === 'other') {
          if (req.headers['content-type'] === undefined) return done(null, undefined);
          return done(new DomainError('unsupported_media_type', 'unsupported', UNSUPPORTED));
        }
        const text = decode(inflate(req, body, o.limit), req.headers['content-type']);
        done(null, as === 'json' ? parseJson(text) : text);
      } catch (e) {
        done(e as Error);
      }
    };
  fastify.addContentTypeParser(JSON_TYPE, { parseAs: 'buffer', bodyLimit: o.limit }, parse('json'));
  for (const type of o.textTypes)
    fastify.addContentTypeParser(type, { parseAs: 'buffer', bodyLimit: o.limit }, parse('text'));
  fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: o.limit }, parse('other'));
}

function inflate(req: FastifyRequest, body: Buffer, limit: number): Buffer {
  const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
  const opts = { maxOutputLength: limit };
  try {
    if (encoding === 'identity') return body;
    if (encoding === 'gzip') return gunzipSync(body, opts);
    if (encoding === 'deflate') return inflateSync(body, opts);
    if (encoding === 'br') return brotliDecompressSync(body, opts);
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      throw new DomainError('payload_too_large', 'too_large', `The body is over ${limit} bytes once inflated`);
    throw new BadRequestException(`The body is not valid ${encoding}`);
  }
  throw new DomainError('unsupported_media_type', 'unsupported', `Content-Encoding ${encoding} is not supported`);
}

/** UTF-8, the one charset JSON has (RFC 8259) and the one YAML bodies are read in. */
function decode(body: Buffer, contentType: string | undefined): string {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
    throw new DomainError('unsupported_media_type', 'unsupported', `Charset ${charset} is not supported: send UTF-8`);
  return body.toString('utf8');
}

/** An object or an array, as body-parser's strict mode: `{}` for an empty body. */
function parseJson(text: string): unknown {
  const start = /^[\s\uFEFF]*(.)/.exec(text)?.[1];
  if (start === undefined) return {};
  if (start !== '{' && start !== '[') throw new BadRequestException('The body must be a JSON object');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new BadRequestException(`The body is not valid JSON: ${(e as Error).message}`);
  }
}
