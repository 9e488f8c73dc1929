import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from './config-error';

/** Where signed checkpoints go, outside the database (issue 28, part 8). */
export type CheckpointSinkConfig =
  /** One file per checkpoint and a `latest` per tenant in `dir`; `implicit`: the embedded default, set by no one. */
  | { kind: 'file'; dir: string; implicit: boolean }
  /** Unset: `checkpoints/` in the data dir on the embedded database, off beside DATABASE_URL (see activeSink). */
  | { kind: 'default' }
  /** POSTed as application/jose, through the webhooks' egress guard (TOLLGATE_WEBHOOK_ALLOW_PRIVATE). */
  | { kind: 'http'; url: string };

export interface CheckpointConfig {
  /** How often the scheduler signs a checkpoint of each tenant with new events (TOLLGATE_CHECKPOINT_INTERVAL). */
  intervalMs: number;
  /** Unset: off (TOLLGATE_CHECKPOINT_SINK=off). */
  sink?: CheckpointSinkConfig;
}

export const DEFAULT_CHECKPOINT_INTERVAL_SECONDS = 15 * 60;
const MAX_INTERVAL_SECONDS = 24 * 3600;
const UNIT: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/**
 * TOLLGATE_CHECKPOINT_INTERVAL (seconds, or a number with s, m, h or d; 1 s to 1 day; default 15m) and
 * TOLLGATE_CHECKPOINT_SINK (`file:///dir`, an http(s) URL, or `off`). Unset sink: a directory in the data dir
 * on the embedded default (the two-command start anchors with no setting), off beside DATABASE_URL.
 */
export function checkpointConfig(env: NodeJS.ProcessEnv): CheckpointConfig {
  return { intervalMs: interval(env.TOLLGATE_CHECKPOINT_INTERVAL) * 1000, sink: sink(env) };
}

/** The sink in use: the default resolved against the database and data dir the service runs with; undefined: off. */
export function activeSink(config: {
  checkpoints: CheckpointConfig;
  databaseUrl?: string;
  dataDir: string;
}): Exclude<CheckpointSinkConfig, { kind: 'default' }> | undefined {
  const s = config.checkpoints.sink;
  if (s?.kind !== 'default') return s;
  return config.databaseUrl ? undefined : { kind: 'file', dir: join(config.dataDir, 'checkpoints'), implicit: true };
}

function interval(raw: string | undefined): number {
  const v = (raw ?? '').trim();
  if (v === '') return DEFAULT_CHECKPOINT_INTERVAL_SECONDS;
  const m = /^(\d{1,6})([smhd]?)$/.exec(v);
  const seconds = m ? Number(m[1]) * UNIT[m[2] || 's'] : NaN;
  if (!(seconds >= 1 && seconds <= MAX_INTERVAL_SECONDS))
    throw new ConfigError(
      `TOLLGATE_CHECKPOINT_INTERVAL must be a duration from 1s to 1d, such as 900, 15m or 1h, got "${raw}"`,
    );
  return seconds;
}

function sink(env: NodeJS.ProcessEnv): CheckpointSinkConfig | undefined {
  const v = (env.TOLLGATE_CHECKPOINT_SINK ?? '').trim();
  if (v === '') return { kind: 'default' };
  if (v.toLowerCase() === 'off') return undefined;
  const bad = () =>
    new ConfigError(
      'TOLLGATE_CHECKPOINT_SINK must be file:///absolute/dir, an https:// URL without credentials (user:password@), or off',
    );
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw bad();
  }
  if (url.protocol === 'file:') {
    if (url.host !== '' || url.search || url.hash) throw bad();
    const dir = fileURLToPath(url);
    if (!isAbsolute(dir)) throw bad();
    return { kind: 'file', dir, implicit: false };
  }
  if ((url.protocol === 'https:' || url.protocol === 'http:') && url.hostname && !url.username && !url.password)
    return { kind: 'http', url: url.toString() };
  throw bad();
}

/** For the start banner: where checkpoints go and how often, or that anchoring is off and how to turn it on. */
export function describeAnchoring(config: {
  checkpoints: CheckpointConfig;
  databaseUrl?: string;
  dataDir: string;
}): string {
  const s = activeSink(config);
  if (!s)
    return config.checkpoints.sink
      ? 'off (set TOLLGATE_CHECKPOINT_SINK to a file:/// directory or an https URL the database superuser cannot write)'
      : 'off (TOLLGATE_CHECKPOINT_SINK=off)';
  const secs = config.checkpoints.intervalMs / 1000;
  const every = secs % 3600 === 0 ? `${secs / 3600}h` : secs % 60 === 0 ? `${secs / 60}m` : `${secs}s`;
  return `checkpoints every ${every} to ${s.kind === 'file' ? s.dir : `POST ${new URL(s.url).origin}`}`;
}
