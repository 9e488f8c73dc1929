import {
  Tollgate,
  TollgateError,
  type Approval,
  type DecisionRequest,
  type Problem,
  type RequestOptions,
  type ToolCall,
} from '@tollgate/sdk';
import { CredentialsError, readLogins } from '../login/credentials';
import { LoginExpiredError, StoredLogin } from '../login/session';
import { isLoopbackHost } from '../../../infrastructure/config/loopback';
import { problemCardUrl } from './passkey-link';

/**
 * The CLI's way to the server: HTTP only, through the SDK, as any other client (CONTRACT §2–§10). Decisions,
 * halts and resumes say `X-Tollgate-Channel: cli`, so they are recorded with `via: "cli"`.
 */

export type { Approval, Problem, ToolCall };

/** Exit codes of the client commands (README "CLI"). */
export const EXIT = { ok: 0, refused: 1, usage: 2, unavailable: 3 } as const;

/** A failure that ends the command with an exit code and one line on stderr. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/**
 * The server answered with a 4xx RFC 9457 problem: the request was refused (exit 1), or a 5xx (exit 3). A problem
 * that points to a call's card (`card`: a passkey it needs, a chat approval it does not take) ends with the card's
 * address at `base`, the server the CLI talks to.
 */
export class ProblemError extends CliError {
  constructor(
    readonly status: number,
    readonly problem: Problem,
    base?: string,
  ) {
    const card = base ? problemCardUrl(base, problem) : undefined;
    super(
      `${problem.code ?? `http_${status}`}: ${problem.detail ?? problem.title ?? `HTTP ${status}`}${card ? ` — its card: ${card}` : ''}`,
      status >= 500 ? EXIT.unavailable : EXIT.refused,
    );
  }
}

export interface ClientOptions {
  url?: string;
  token?: string;
}

export interface Connection {
  url: string;
  /** The token as known when the command starts (a stored login's may be refreshed on the way). */
  token: string;
  /** Set when the token comes from `tollgate login`: it refreshes itself. */
  login?: StoredLogin;
}

export const DEFAULT_URL = 'http://127.0.0.1:8080';

/**
 * `--url/--token` win over `TOLLGATE_URL`/`TOLLGATE_TOKEN`; with no token, the login `tollgate login` stored for
 * that URL (with no URL given either, the only stored login); none of them is a usage error (exit 2).
 */
export function connection(o: ClientOptions, env: NodeJS.ProcessEnv = process.env): Connection {
  const given = o.url ?? env.TOLLGATE_URL;
  const url = serverUrl(given ?? DEFAULT_URL);
  const token = (o.token ?? env.TOLLGATE_TOKEN ?? '').trim();
  if (token) return { url, token };
  const login = storedLogin(url, given === undefined);
  if (login) return { url: login.url, token: login.current, login };
  throw new CliError(
    `No token: run tollgate login --url ${url}, set TOLLGATE_TOKEN or pass --token (for development: export TOLLGATE_TOKEN=$(tollgate token --sub you --role approver))`,
    EXIT.usage,
  );
}

/** An http(s) URL without a trailing slash, as logins are stored under; anything else is a usage error. */
export function serverUrl(raw: string): string {
  const trimmed = raw.trim();
  try {
    const url = new URL(trimmed);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
    return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
  } catch {
    throw new CliError(`TOLLGATE_URL / --url must be an http(s) URL, got "${trimmed}"`, EXIT.usage);
  }
}

/** Loopback: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(url: string): boolean {
  return isLoopbackHost(new URL(url).hostname);
}

/** Plain http anywhere but this machine: whoever is on the path reads the token sent with each request. */
export function isInsecure(url: string): boolean {
  return new URL(url).protocol === 'http:' && !isLoopback(url);
}

/**
 * A login's token (an ID token the organisation's provider signed) goes over https only, or to this machine: over
 * plain http anyone on the path could take it and act as the person at the server until it expires.
 */
export function refuseInsecureLogin(url: string): void {
  if (isInsecure(url))
    throw new CliError(
      `refusing to use a login over plain http with ${url}: the token would travel in clear; use the server's https:// URL (http is allowed only on this machine: localhost, 127.0.0.1, ::1)`,
      EXIT.usage,
    );
}

function storedLogin(url: string, anyIfOnlyOne: boolean): StoredLogin | undefined {
  try {
    const found = StoredLogin.find(url);
    if (found || !anyIfOnlyOne) return found;
    const all = readLogins();
    return all.length === 1 ? StoredLogin.find(all[0].url) : undefined;
  } catch (e) {
    if (e instanceof CredentialsError) throw new CliError(e.message, EXIT.usage);
    throw e;
  }
}

/**
 * The CLI's client: the SDK's `Tollgate` (HTTP, problems, the event stream, the API's types), with its failures
 * turned into the CLI's exit codes. No retries: a person at a terminal sees a failure at once and runs the
 * command again.
 */
export class ApiClient {
  readonly tollgate: Tollgate;

  constructor(readonly conn: Connection) {
    const login = conn.login;
    if (login) refuseInsecureLogin(conn.url);
    this.tollgate = new Tollgate({
      url: conn.url,
      // A stored login's token is asked for before each request, and again after a 401 (the SDK does that once).
      token: login ? () => loginToken(login) : conn.token,
      channel: 'cli',
      headers: { 'user-agent': 'tollgate-cli' },
      retry: { maxAttempts: 1 },
      ...(login ? { fetch: noticing401(login) } : {}),
    });
  }

  /** Runs SDK calls; a refusal becomes a ProblemError (exit 1, or 3 for a 5xx), no answer a CliError (exit 3). */
  async call<T>(work: (tollgate: Tollgate) => Promise<T>): Promise<T> {
    try {
      return await work(this.tollgate);
    } catch (e) {
      throw cliError(e, this.conn.url);
    }
  }

  get<T>(path: string, opts: RequestOptions = {}): Promise<T> {
    return this.call((t) => t.request<T>('GET', path, opts));
  }

  post<T>(path: string, body: unknown, opts: RequestOptions = {}): Promise<T> {
    return this.call((t) => t.request<T>('POST', path, { ...opts, body }));
  }

  put<T>(path: string, opts: RequestOptions): Promise<T> {
    return this.call((t) => t.request<T>('PUT', path, opts));
  }

  /** Records `via: "cli"` on the decision. Answers the tool call as it now stands. */
  decide(id: string, body: DecisionRequest): Promise<ToolCall> {
    return this.call((t) => t.inbox().decide(id, body));
  }

  /** Every pending call the caller may decide, oldest first (all pages). */
  approvals(): Promise<Approval[]> {
    return this.call((t) => t.inbox().all());
  }
}

async function loginToken(login: StoredLogin): Promise<string> {
  try {
    return await login.token();
  } catch (e) {
    if (e instanceof LoginExpiredError || e instanceof CredentialsError) throw new CliError(e.message, EXIT.usage);
    throw e;
  }
}

/** A 401 to the stored login's token marks it stale, so the SDK's second ask gets a refreshed one. */
function noticing401(login: StoredLogin) {
  return async (input: string, init: RequestInit): Promise<Response> => {
    const res = await globalThis.fetch(input, init);
    if (res.status === 401) {
      const sent = new Headers(init.headers).get('authorization')?.replace(/^Bearer /, '');
      if (sent) login.rejected(sent);
    }
    return res;
  };
}

/** An SDK failure as the CLI reports it; `base`: the server's URL, for links to a call's card. */
export function cliError(e: unknown, base?: string): unknown {
  if (!(e instanceof TollgateError)) return e;
  if (e.status === 0) return new CliError(e.detail, EXIT.unavailable); // "cannot reach Tollgate at …: ECONNREFUSED"
  return new ProblemError(e.status, e.problem, base);
}
