import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { AuditCheckpoint } from '../../application/queries/audit/audit.queries';
import type { CheckpointSinkReader, LatestCheckpoint } from '../../application/ports/checkpoint-sink.port';
import type { EgressGuard } from '../webhooks/egress-guard';
import { sendWebhook } from '../webhooks/webhook-sender';

/** A checkpoint is a few hundred bytes; anything far larger in the sink is not one. */
export const MAX_CHECKPOINT_BYTES = 16 * 1024;

/** Where the scheduler writes (issue 28, part 8): a directory, or an http(s) endpoint. */
export interface CheckpointSink extends CheckpointSinkReader {
  /** Writes one checkpoint; answers where (a file name, or the endpoint's status); throws when it could not. */
  write(cp: AuditCheckpoint): Promise<string>;
  /** The seq and hash of the last checkpoint written for the tenant, when the sink can be read back. */
  latestClaims(tenantId: string): Promise<{ seq: number; hash: string } | undefined>;
  /** For logs and the start banner; never a secret (a URL is shown by its origin only). */
  readonly description: string;
  /** Why the sink cannot be written at all (a destination the egress guard refuses); checked at start. */
  preflight?(): Promise<string | undefined>;
}

/**
 * A tenant's directory name: its id when made of letters, digits, `_` and `-` (at most 100), otherwise `~` and
 * its id percent-encoded byte by byte — never `.`, `..` or a path separator, so no tenant reaches another's files.
 */
export function tenantDirName(tenantId: string): string {
  if (/^[A-Za-z0-9_-]{1,100}$/.test(tenantId)) return tenantId;
  const encoded = [...Buffer.from(tenantId, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9_-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`,
    )
    .join('');
  return `~${encoded.slice(0, 200)}`;
}

/** `<time>-<seq>.jws`, the time in ISO 8601 basic form (no colons: a valid name everywhere), so names sort by time. */
export function checkpointFileName(at: string, seq: number): string {
  return `${at.replace(/[-:]/g, '')}-${seq}.jws`;
}

/** The claims of a compact JWS, read without checking its signature (verify checks it); undefined if not one. */
export function peekClaims(jws: string): { tenant?: unknown; seq: number; hash: string; at: string } | undefined {
  const parts = jws.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const p = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as Record<string, unknown>;
    if (!Number.isSafeInteger(p.seq) || typeof p.hash !== 'string' || typeof p.at !== 'string') return undefined;
    return { tenant: p.tenant, seq: p.seq as number, hash: p.hash, at: p.at };
  } catch {
    return undefined;
  }
}

/** Writes `text` to `path` whole or not at all: a temporary file in the same directory, synced, then renamed. */
async function writeAtomically(path: string, dir: string, text: string): Promise<void> {
  const tmp = join(dir, `.tmp-${randomBytes(8).toString('hex')}`);
  const file = await open(tmp, 'wx', 0o640);
  try {
    await file.writeFile(text, 'utf8');
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/**
 * TOLLGATE_CHECKPOINT_SINK=file:///dir (and the embedded default, `checkpoints/` in the data dir): one file per
 * checkpoint, `<dir>/<tenant>/<time>-<seq>.jws`, and `<dir>/<tenant>/latest` holding the newest JWS, each written
 * atomically. Files are never rewritten: a new checkpoint is a new file, then `latest` moves.
 */
export class FileCheckpointSink implements CheckpointSink {
  readonly description: string;

  constructor(private readonly dir: string) {
    this.description = `the directory ${dir}`;
  }

  async write(cp: AuditCheckpoint): Promise<string> {
    const dir = join(this.dir, tenantDirName(cp.tenant));
    await mkdir(dir, { recursive: true, mode: 0o750 });
    const name = checkpointFileName(cp.at, cp.seq);
    await writeAtomically(join(dir, name), dir, cp.jws + '\n');
    await writeAtomically(join(dir, 'latest'), dir, cp.jws + '\n');
    return name;
  }

  async latest(tenantId: string): Promise<{ found: LatestCheckpoint } | { none: string | null }> {
    let jws: string | undefined;
    try {
      jws = await this.read(tenantId);
    } catch (e) {
      // Verify still answers (without the checkpoint, saying so) when the sink cannot be read.
      return { none: `the checkpoint sink could not be read (${(e as NodeJS.ErrnoException).code ?? 'error'})` };
    }
    if (jws === undefined) return { none: null }; // none written yet: nothing to hold the chain against
    const claims = peekClaims(jws);
    return { found: { jws, name: claims ? checkpointFileName(claims.at, claims.seq) : 'latest' } };
  }

  async latestClaims(tenantId: string): Promise<{ seq: number; hash: string } | undefined> {
    const jws = await this.read(tenantId);
    const claims = jws === undefined ? undefined : peekClaims(jws);
    return claims && claims.tenant === tenantId ? { seq: claims.seq, hash: claims.hash } : undefined;
  }

  /** The tenant's `latest`, bounded; undefined when there is none. */
  private async read(tenantId: string): Promise<string | undefined> {
    const path = join(this.dir, tenantDirName(tenantId), 'latest');
    try {
      if ((await stat(path)).size > MAX_CHECKPOINT_BYTES) return 'oversized';
      return (await readFile(path, 'utf8')).trim();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }
}

/**
 * TOLLGATE_CHECKPOINT_SINK=https://…: each checkpoint is POSTed as `application/jose` (the compact JWS as the
 * body), through the webhooks' egress guard: a private, loopback or link-local destination only where
 * TOLLGATE_WEBHOOK_ALLOW_PRIVATE allows it, no redirect followed. A 2xx answer is a write; anything else throws.
 */
export class HttpCheckpointSink implements CheckpointSink {
  readonly description: string;

  constructor(
    private readonly url: string,
    private readonly guard: EgressGuard,
    private readonly timeoutMs: number,
  ) {
    this.description = `POST ${new URL(url).origin}`;
  }

  async write(cp: AuditCheckpoint): Promise<string> {
    const outcome = await sendWebhook(
      this.guard,
      this.url,
      {
        'content-type': 'application/jose',
        'x-tollgate-tenant': encodeURIComponent(cp.tenant),
        'x-tollgate-checkpoint-seq': String(cp.seq),
      },
      cp.jws,
      this.timeoutMs,
    );
    if ('status' in outcome) {
      if (outcome.status >= 200 && outcome.status < 300) return `HTTP ${outcome.status}`;
      throw new Error(`${this.description} answered ${outcome.status}`);
    }
    throw new Error(`${this.description}: ${outcome.error} (${outcome.cause})`);
  }

  async preflight(): Promise<string | undefined> {
    const target = await this.guard.check(this.url);
    return target.ok ? undefined : target.detail;
  }

  latest(): Promise<{ none: string }> {
    return Promise.resolve({
      none: 'the checkpoint sink is an http(s) endpoint, which verify does not read back: pass checkpoint=<a JWS it received>',
    });
  }

  latestClaims(): Promise<undefined> {
    return Promise.resolve(undefined);
  }
}

/** No sink (TOLLGATE_CHECKPOINT_SINK=off, or DATABASE_URL without one): verify answers as it always did. */
export class NoCheckpointSink implements CheckpointSinkReader {
  latest(): Promise<{ none: null }> {
    return Promise.resolve({ none: null });
  }
}
