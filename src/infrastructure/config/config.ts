import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { SPAN_UNIT_SECONDS } from './duration';
import { DEFAULT_OPEN_QUESTION_LIMITS } from '../../domain/question/rules/open-question-limit';
import { ConfigError } from './config-error';
import { isLoopbackHost } from './loopback';
import { OidcConfig, oidcConfig } from './oidc-config';
import { personMaxAge, SlackConfig, slackConfig } from './slack-config';
import { CheckpointConfig, checkpointConfig } from './checkpoint-config';

export { ConfigError } from './config-error';
export { isLoopbackHost } from './loopback';
export { parseSlackApprovers, type SlackConfig } from './slack-config';
export { parseRoleMap, type OidcConfig } from './oidc-config';
export { activeSink, describeAnchoring, type CheckpointConfig, type CheckpointSinkConfig } from './checkpoint-config';

export interface AuthConfig {
  /** HS256 shared secret (TOLLGATE_JWT_SECRET, or the dev secret made in the data dir). */
  secret?: string;
  jwksUrl?: string;
  issuer?: string;
  audience?: string;
  /** True when the secret was generated for local development. */
  devSecret: boolean;
  /** Longest lifetime a token may claim (exp − iat), in seconds (TOLLGATE_JWT_MAX_TTL, default 24 h). */
  maxTtlSeconds?: number;
  /**
   * The audiences an end user's own token (start conversation's `user.token`) may be issued for
   * (TOLLGATE_USER_TOKEN_AUDIENCE, comma-separated: e.g. the agent application's client id at the provider). Never one
   * Tollgate accepts bearer tokens for (resolveAuth refuses that at start). Unset: user tokens are refused.
   */
  userTokenAudiences?: string[];
  /**
   * The single sign-on provider, set by resolveAuth when TOLLGATE_OIDC_ISSUER is: bearer tokens it issued (`iss`)
   * are verified with its keys (its discovery document's jwks_uri) and mapped to a person by the same claims
   * mapping as web sign-in.
   */
  provider?: {
    issuer: string;
    /** The web and CLI client ids, and TOLLGATE_JWT_AUDIENCE when set. */
    audiences: string[];
    mapping: Pick<OidcConfig, 'rolesClaim' | 'roleMap' | 'tenant'>;
  };
}

export interface TollgateConfig {
  host: string;
  port: number;
  /** PostgreSQL URL; unset → embedded PGlite in `dataDir`. May point at a pooler (PgBouncer in transaction mode). */
  databaseUrl?: string;
  /**
   * PostgreSQL itself, bypassing any pooler (TOLLGATE_DATABASE_DIRECT_URL; defaults to DATABASE_URL): the LISTEN
   * connection for cross-instance wake-ups and the migrations, which need a session of their own. Unset in
   * embedded mode.
   */
  databaseDirectUrl?: string;
  dataDir: string;
  migrate: boolean;
  /**
   * Named prepared statements for the hot path (TOLLGATE_DATABASE_PREPARED_STATEMENTS, default on). Off behind a
   * pooler in transaction mode that cannot carry them (PgBouncer before 1.21, or without max_prepared_statements).
   */
  preparedStatements: boolean;
  auth: AuthConfig;
  policyFile?: string;
  /** Where gRPC listens (on `host`), beside HTTP; 0: a free port; undefined: no gRPC (TOLLGATE_GRPC_PORT=off). */
  grpcPort?: number;
  /** How often the expiry sweeper runs (ms). Pending calls expire at most about this late. */
  sweepIntervalMs: number;
  /** How often the outbox relay looks for undelivered events (ms; 0 turns it off on this instance). */
  outboxPollMs: number;
  /** How long one instance holds a consumer's stream; a crashed instance's work is taken over after it. */
  outboxLeaseSeconds: number;
  /** How often live event streams look for events committed by other instances (ms). */
  streamPollMs: number;
  /** Requests per token per 10 s on this instance (0: no limit). */
  rateLimitPer10s: number;
  /** Long-polls one token may hold open at once on this instance. */
  maxWaitsPerToken: number;
  /** Long-polls and event streams one tenant's tokens may hold open at once on this instance. */
  maxWaitsPerTenant: number;
  /** Open (pending) questions an agent may keep per conversation and in all (TOLLGATE_MAX_OPEN_QUESTIONS_PER_…). */
  openQuestions: { perConversation: number; perAgent: number };
  /** Requests with a missing or invalid token one client address may make per 10 s on this instance (0: no limit). */
  authFailuresPer10s: number;
  /** Bytes an event stream may have queued for a client that does not read; past it the client is dropped and resumes with Last-Event-ID. */
  streamMaxBufferBytes: number;
  /** Ed25519 key that signs receipts and checkpoints, as PKCS#8 PEM or a private JWK, when it is not to live in the database. */
  signingKey?: string;
  /** A file holding that key (TOLLGATE_SIGNING_KEY_FILE); read at start. */
  signingKeyFile?: string;
  /**
   * The data key that masks and seals secret arguments (TOLLGATE_DATA_KEY: 32 bytes in base64 or hex; several,
   * comma-separated, to rotate: the first seals, all open). Unset: TOLLGATE_DATA_KEY_FILE, else the data dir's
   * `data-key` on the embedded default (infrastructure/secrets/data-key.ts). Never logged.
   */
  dataKey?: string;
  /** A file holding the data key(s), one a line (TOLLGATE_DATA_KEY_FILE); read at start. */
  dataKeyFile?: string;
  /** The URL people and tool backends reach this service at (TOLLGATE_PUBLIC_URL); unset: the URL it listens on. */
  publicUrl?: string;
  /** The `aud` of execution receipts (TOLLGATE_RECEIPT_AUDIENCE); unset: `publicUrl`. */
  receiptAudience?: string;
  /** How often a long-poll re-reads its call even without a wake-up (the fallback for a lost notification). */
  longPollRecheckMs: number;
  instanceId: string;
  /** pino level names; `LOG_LEVEL` (or `TOLLGATE_LOG_LEVEL`) also takes Nest's `log` and `verbose`. */
  logLevel: LogLevelName;
  /** `json` or `pretty`; unset: pretty on a terminal, JSON otherwise (TOLLGATE_LOG_FORMAT). */
  logFormat?: LogFormat;
  /** Single sign-on with the organisation's OpenID provider; unset unless TOLLGATE_OIDC_ISSUER is set. */
  oidc?: OidcConfig;
  /** The Slack approver; unset unless SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET and SLACK_CHANNEL are all set. */
  slack?: SlackConfig;
  /** Outgoing webhooks: how deliveries are retried and how long one may take. */
  webhooks: WebhookDeliveryConfig;
  /** Email to approvers over SMTP; unset unless TOLLGATE_SMTP_URL is set. */
  email?: EmailConfig;
  /** Web Push to approvers' browsers and phones (always on: a person opts in from the web settings). */
  push: PushConfig;
  /**
   * How old a person's last sign-in may be for a channel that acts for them without a sign-in of its own (Slack,
   * push, email) to trust the roles recorded then (TOLLGATE_PERSON_MAX_AGE, default 7 days).
   */
  personMaxAgeSeconds: number;
  /** Signed audit checkpoints written outside the database on a schedule (TOLLGATE_CHECKPOINT_*; issue 28). */
  checkpoints: CheckpointConfig;
}

export interface EmailConfig {
  /** `smtp://user:pass@host:587`, `smtps://…:465` (TOLLGATE_SMTP_URL): never logged, it may carry a password. */
  smtpUrl: string;
  /** The From address (TOLLGATE_SMTP_FROM), such as `Tollgate <tollgate@example.com>`. */
  from: string;
}

export interface PushConfig {
  /**
   * The VAPID `sub` push services may contact the operator at (TOLLGATE_VAPID_SUBJECT: a `mailto:` or `https:` URL);
   * unset: TOLLGATE_PUBLIC_URL when it is https, else `mailto:` the SMTP From address, else none (push stays off).
   */
  subject?: string;
  /** A VAPID key pair the operator keeps (TOLLGATE_VAPID_PUBLIC_KEY and TOLLGATE_VAPID_PRIVATE_KEY, base64url); unset: kept in the database, made on first use. */
  publicKey?: string;
  privateKey?: string;
}

export interface WebhookDeliveryConfig {
  /** First retry after this long; each further one waits twice as long (capped at an hour). */
  retryBaseMs: number;
  /** Attempts per delivery, the first included; then the delivery is marked failed. */
  maxAttempts: number;
  /** How long one attempt may take before it counts as failed. */
  timeoutMs: number;
  /**
   * Private, loopback, link-local and other non-public destinations webhooks may reach (CIDRs).
   * Empty by default: receivers must be public unless the operator allows more (TOLLGATE_WEBHOOK_ALLOW_PRIVATE).
   */
  allowPrivate: string[];
}

export type LogLevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type LogFormat = 'json' | 'pretty';

/** Nest's level names (the README's `log`, `verbose`) and pino's, to pino's. */
const LOG_LEVELS: Record<string, LogLevelName> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  info: 'info',
  debug: 'debug',
  verbose: 'trace',
  trace: 'trace',
  silent: 'silent',
  off: 'silent',
};

/** Reads the environment once; every setting the README documents is parsed here and nowhere else. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): TollgateConfig {
  const port = int(env.PORT, 8080, 'PORT');
  const grpc = grpcPort(env.TOLLGATE_GRPC_PORT, port);
  const host = env.HOST || '127.0.0.1';
  const oidc = oidcConfig(env);
  const publicAt = publicUrl(env.TOLLGATE_PUBLIC_URL);
  // The redirect URI is <public URL>/auth/callback. Listening on loopback it is the listening address, which only
  // this machine's browser reaches; anywhere else no address the server can see is known to be the one people use
  // (a Host header is the caller's word), so the operator says it.
  if (oidc && !publicAt && !isLoopbackHost(host))
    throw new ConfigError(
      `TOLLGATE_OIDC_ISSUER needs TOLLGATE_PUBLIC_URL when listening on ${host}: the redirect URI registered with the provider is <TOLLGATE_PUBLIC_URL>/auth/callback`,
    );
  return {
    host,
    port,
    databaseUrl: env.DATABASE_URL || undefined,
    databaseDirectUrl: directUrl(env),
    dataDir: resolve(env.TOLLGATE_DATA_DIR || './.tollgate'),
    migrate: env.TOLLGATE_MIGRATE !== 'false',
    preparedStatements: onOff(env.TOLLGATE_DATABASE_PREPARED_STATEMENTS, true, 'TOLLGATE_DATABASE_PREPARED_STATEMENTS'),
    auth: {
      secret: env.TOLLGATE_JWT_SECRET || undefined,
      jwksUrl: env.TOLLGATE_JWKS_URL || undefined,
      issuer: env.TOLLGATE_JWT_ISSUER || undefined,
      audience: env.TOLLGATE_JWT_AUDIENCE || undefined,
      devSecret: false,
      maxTtlSeconds: duration(env.TOLLGATE_JWT_MAX_TTL, 24 * 3600, 'TOLLGATE_JWT_MAX_TTL'),
      userTokenAudiences: audienceList(env.TOLLGATE_USER_TOKEN_AUDIENCE, 'TOLLGATE_USER_TOKEN_AUDIENCE'),
    },
    policyFile: env.TOLLGATE_POLICY_FILE || undefined,
    grpcPort: grpc,
    sweepIntervalMs: int(env.TOLLGATE_SWEEP_INTERVAL_MS, 500, 'TOLLGATE_SWEEP_INTERVAL_MS'),
    outboxPollMs: int(env.TOLLGATE_OUTBOX_POLL_MS, 1000, 'TOLLGATE_OUTBOX_POLL_MS'),
    outboxLeaseSeconds: Math.max(1, int(env.TOLLGATE_OUTBOX_LEASE_SECONDS, 30, 'TOLLGATE_OUTBOX_LEASE_SECONDS')),
    streamPollMs: Math.max(50, int(env.TOLLGATE_STREAM_POLL_MS, 1000, 'TOLLGATE_STREAM_POLL_MS')),
    rateLimitPer10s: int(env.TOLLGATE_RATE_LIMIT, 1000, 'TOLLGATE_RATE_LIMIT'),
    maxWaitsPerToken: int(env.TOLLGATE_MAX_WAITS_PER_TOKEN, 100, 'TOLLGATE_MAX_WAITS_PER_TOKEN'),
    maxWaitsPerTenant: int(env.TOLLGATE_MAX_WAITS_PER_TENANT, 1000, 'TOLLGATE_MAX_WAITS_PER_TENANT'),
    openQuestions: {
      perConversation: positive(
        env.TOLLGATE_MAX_OPEN_QUESTIONS_PER_CONVERSATION,
        DEFAULT_OPEN_QUESTION_LIMITS.perConversation,
        'TOLLGATE_MAX_OPEN_QUESTIONS_PER_CONVERSATION',
      ),
      perAgent: positive(
        env.TOLLGATE_MAX_OPEN_QUESTIONS_PER_AGENT,
        DEFAULT_OPEN_QUESTION_LIMITS.perAgent,
        'TOLLGATE_MAX_OPEN_QUESTIONS_PER_AGENT',
      ),
    },
    authFailuresPer10s: int(env.TOLLGATE_AUTH_FAILURE_LIMIT, 50, 'TOLLGATE_AUTH_FAILURE_LIMIT'),
    streamMaxBufferBytes: Math.max(
      64 * 1024,
      int(env.TOLLGATE_STREAM_MAX_BUFFER_BYTES, 4 * 1024 * 1024, 'TOLLGATE_STREAM_MAX_BUFFER_BYTES'),
    ),
    signingKey: env.TOLLGATE_SIGNING_KEY || undefined,
    signingKeyFile: env.TOLLGATE_SIGNING_KEY_FILE || undefined,
    dataKey: env.TOLLGATE_DATA_KEY || undefined,
    dataKeyFile: env.TOLLGATE_DATA_KEY_FILE || undefined,
    publicUrl: publicAt,
    receiptAudience: receiptAudience(env.TOLLGATE_RECEIPT_AUDIENCE),
    longPollRecheckMs: Math.max(100, int(env.TOLLGATE_LONGPOLL_RECHECK_MS, 5000, 'TOLLGATE_LONGPOLL_RECHECK_MS')),
    instanceId: env.TOLLGATE_INSTANCE_ID || `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
    logLevel: logLevel(env),
    logFormat: logFormat(env.TOLLGATE_LOG_FORMAT),
    oidc,
    slack: slackConfig(env),
    webhooks: {
      retryBaseMs: Math.max(1, int(env.TOLLGATE_WEBHOOK_RETRY_BASE_MS, 5000, 'TOLLGATE_WEBHOOK_RETRY_BASE_MS')),
      maxAttempts: Math.max(1, int(env.TOLLGATE_WEBHOOK_MAX_ATTEMPTS, 10, 'TOLLGATE_WEBHOOK_MAX_ATTEMPTS')),
      timeoutMs: Math.max(100, int(env.TOLLGATE_WEBHOOK_TIMEOUT_MS, 10_000, 'TOLLGATE_WEBHOOK_TIMEOUT_MS')),
      allowPrivate: cidrList(env.TOLLGATE_WEBHOOK_ALLOW_PRIVATE, 'TOLLGATE_WEBHOOK_ALLOW_PRIVATE'),
    },
    email: emailConfig(env),
    push: pushConfig(env, publicAt),
    personMaxAgeSeconds: personMaxAge(env.TOLLGATE_PERSON_MAX_AGE),
    checkpoints: checkpointConfig(env),
  };
}

/** A comma-separated list of token audiences (client ids or URIs); unset or blank: undefined. */
function audienceList(raw: string | undefined, name: string): string[] | undefined {
  const list = [
    ...new Set(
      (raw ?? '')
        .split(',')
        .map((a) => a.trim())
        .filter(Boolean),
    ),
  ];
  if (list.length === 0) return undefined;
  if (list.length > 20) throw new ConfigError(`${name} lists ${list.length} audiences: at most 20`);
  const long = list.find((a) => a.length > 256);
  if (long !== undefined) throw new ConfigError(`${name}: an audience is at most 256 characters`);
  return list;
}

/** TOLLGATE_DATABASE_DIRECT_URL, or DATABASE_URL when unset; only beside DATABASE_URL (embedded mode has no pooler). */
function directUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = (env.TOLLGATE_DATABASE_DIRECT_URL ?? '').trim();
  if (raw === '') return env.DATABASE_URL || undefined;
  if (!env.DATABASE_URL) {
    throw new ConfigError(
      'TOLLGATE_DATABASE_DIRECT_URL is set but DATABASE_URL is not; set DATABASE_URL (the pooler, or PostgreSQL) too, or unset both for the embedded database',
    );
  }
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    protocol = '';
  }
  if (protocol !== 'postgres:' && protocol !== 'postgresql:') {
    throw new ConfigError(
      'TOLLGATE_DATABASE_DIRECT_URL is not a URL such as postgres://user:password@db-host:5432/database (PostgreSQL itself, not the pooler)',
    );
  }
  return raw;
}

/**
 * TOLLGATE_PUBLIC_URL: the URL people and tool backends reach this service at (behind a proxy, the proxy's). An
 * absolute http(s) URL without credentials, query or fragment; a trailing slash is dropped so that
 * `https://tg.example.com/` and `https://tg.example.com` name the same service (receipts carry it as `aud`).
 */
function publicUrl(raw: string | undefined): string | undefined {
  const v = (raw ?? '').trim();
  if (v === '') return undefined;
  let url: URL | undefined;
  try {
    url = new URL(v);
  } catch {
    url = undefined;
  }
  if (
    !url ||
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    !url.hostname ||
    url.username ||
    url.password ||
    url.search ||
    url.hash ||
    v.includes('?') ||
    v.includes('#')
  ) {
    throw new ConfigError(
      `TOLLGATE_PUBLIC_URL must be the http(s) URL this service is reached at, such as https://tollgate.example.com, got "${raw}"`,
    );
  }
  return v.replace(/\/+$/, '');
}

/** TOLLGATE_RECEIPT_AUDIENCE: the `aud` of receipts, any short printable text (a URL or a URN). */
function receiptAudience(raw: string | undefined): string | undefined {
  const v = (raw ?? '').trim();
  if (v === '') return undefined;
  if (v.length > 1024 || /[\u0000-\u001f\u007f]/.test(v))
    throw new ConfigError(
      'TOLLGATE_RECEIPT_AUDIENCE must be printable text of at most 1024 characters, such as https://tollgate.example.com',
    );
  return v;
}

function onOff(raw: string | undefined, fallback: boolean, name: string): boolean {
  const v = (raw ?? '').trim().toLowerCase();
  if (v === '') return fallback;
  if (v === 'on' || v === 'true') return true;
  if (v === 'off' || v === 'false') return false;
  throw new ConfigError(`${name} must be on or off, got "${raw}"`);
}

/**
 * TOLLGATE_GRPC_PORT: a port, `off` (no gRPC), or unset: PORT + 1 (8081 beside HTTP's 8080), so that a second
 * instance on another PORT does not collide with the first one's gRPC port; a free port too when PORT is 0 (tests,
 * and anything else that asks the system for ports).
 */
function grpcPort(raw: string | undefined, httpPort: number): number | undefined {
  const v = (raw ?? '').trim().toLowerCase();
  if (v === 'off' || v === 'false') return undefined;
  if (v === '' && httpPort === 65535)
    throw new ConfigError('PORT is 65535, so TOLLGATE_GRPC_PORT (PORT + 1 by default) must be set: a port, or off');
  if (v === '') return httpPort === 0 ? 0 : httpPort + 1;
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 65535)
    throw new ConfigError(`TOLLGATE_GRPC_PORT must be a port (0 to 65535) or off, got "${raw}"`);
  if (n !== 0 && n === httpPort)
    throw new ConfigError(
      `TOLLGATE_GRPC_PORT and PORT are both ${n}; gRPC needs a port of its own (or TOLLGATE_GRPC_PORT=off)`,
    );
  return n;
}

/** `true` allows every address; otherwise a comma-separated CIDR list such as `10.0.0.0/8,fd00::/8`. */
export function cidrList(raw: string | undefined, name: string): string[] {
  const v = (raw ?? '').trim();
  if (v === '' || v === 'false') return [];
  if (v === 'true') return ['0.0.0.0/0', '::/0'];
  return v
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean)
    .map((c) => {
      const m = /^([0-9a-fA-F.:]+)\/(\d{1,3})$/.exec(c);
      const isV4 = !!m && isIP(m[1]) === 4;
      if (!m || isIP(m[1]) === 0 || Number(m[2]) > (isV4 ? 32 : 128))
        throw new ConfigError(`${name}: "${c}" is not a CIDR such as 10.0.0.0/8 (or set it to true)`);
      return c;
    });
}

function logLevel(env: NodeJS.ProcessEnv): LogLevelName {
  const name = env.TOLLGATE_LOG_LEVEL ? 'TOLLGATE_LOG_LEVEL' : 'LOG_LEVEL';
  const raw = (env[name] || 'info').trim();
  const level = LOG_LEVELS[raw.toLowerCase()];
  if (!level)
    throw new ConfigError(
      `${name} must be one of error, warn, info (or log), debug, trace (or verbose), silent; got "${raw}"`,
    );
  return level;
}

function logFormat(raw: string | undefined): LogFormat | undefined {
  const v = (raw ?? '').trim().toLowerCase();
  if (v === '' || v === 'auto') return undefined;
  if (v === 'json' || v === 'pretty') return v;
  throw new ConfigError(
    `TOLLGATE_LOG_FORMAT must be json or pretty (unset: pretty on a terminal, JSON otherwise), got "${raw}"`,
  );
}

/** Seconds, or a number with s, m, h or d (`24h`). */
function duration(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw === '') return fallback;
  const m = /^(\d{1,9})([smhd]?)$/.exec(raw.trim());
  if (!m || Number(m[1]) === 0)
    throw new ConfigError(`${name} must be a duration such as 3600, 90m or 24h, got "${raw}"`);
  return Number(m[1]) * SPAN_UNIT_SECONDS[(m[2] || 's') as 's' | 'm' | 'h' | 'd'];
}

/** A limit with no "off": 0 would refuse everything it bounds. */
function positive(raw: string | undefined, fallback: number, name: string): number {
  const n = int(raw, fallback, name);
  if (n < 1) throw new ConfigError(`${name} must be at least 1, got "${raw}"`);
  return n;
}

function int(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535 * 1000)
    throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  return n;
}

export const TOLLGATE_CONFIG = Symbol('TollgateConfig');

/** TOLLGATE_SMTP_URL and TOLLGATE_SMTP_FROM: both or neither. The URL is never repeated in a message (it may hold a password). */
function emailConfig(env: NodeJS.ProcessEnv): EmailConfig | undefined {
  const url = (env.TOLLGATE_SMTP_URL ?? '').trim();
  const from = (env.TOLLGATE_SMTP_FROM ?? '').trim();
  if (!url && !from) return undefined;
  if (!url)
    throw new ConfigError('TOLLGATE_SMTP_FROM is set but TOLLGATE_SMTP_URL is not: set both to email approvers');
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') || !parsed.hostname)
    throw new ConfigError(
      'TOLLGATE_SMTP_URL must be an smtp:// or smtps:// URL, such as smtp://user:password@mail.example.com:587',
    );
  if (!from)
    throw new ConfigError(
      'TOLLGATE_SMTP_URL is set but TOLLGATE_SMTP_FROM is not: say whom the emails come from, such as Tollgate <tollgate@example.com>',
    );
  if (from.length > 320 || /[\u0000-\u001f\u007f]/.test(from) || !/@[^@\s>]+>?$/.test(from))
    throw new ConfigError(
      `TOLLGATE_SMTP_FROM must be an email address, such as Tollgate <tollgate@example.com>, got "${from}"`,
    );
  return { smtpUrl: url, from };
}

function pushConfig(env: NodeJS.ProcessEnv, publicAt: string | undefined): PushConfig {
  const subject = (env.TOLLGATE_VAPID_SUBJECT ?? '').trim();
  if (subject && !/^(mailto:[^\s@]+@[^\s@]+|https:\/\/\S+)$/.test(subject))
    throw new ConfigError(
      `TOLLGATE_VAPID_SUBJECT must be a mailto: or https: URL, such as mailto:ops@example.com, got "${subject}"`,
    );
  const publicKey = (env.TOLLGATE_VAPID_PUBLIC_KEY ?? '').trim();
  const privateKey = (env.TOLLGATE_VAPID_PRIVATE_KEY ?? '').trim();
  if (!!publicKey !== !!privateKey)
    throw new ConfigError(
      'Set both TOLLGATE_VAPID_PUBLIC_KEY and TOLLGATE_VAPID_PRIVATE_KEY, or neither (then the key pair is kept in the database)',
    );
  const fromAddress = /<([^<>\s]+@[^<>\s]+)>$|^([^<>\s]+@[^<>\s]+)$/.exec((env.TOLLGATE_SMTP_FROM ?? '').trim());
  const fallback = publicAt?.startsWith('https://')
    ? publicAt
    : fromAddress
      ? `mailto:${fromAddress[1] ?? fromAddress[2]}`
      : undefined;
  return {
    ...(subject || fallback ? { subject: subject || fallback } : {}),
    ...(publicKey ? { publicKey, privateKey } : {}),
  };
}
