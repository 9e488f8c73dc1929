import {
  Tollgate,
  TollgateError,
  type Approval,
  type DecisionRequest,
  type Problem,
  type RequestOptions,
  type ToolCall,
} from '@tollgate/sdk';

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

/** The server answered with a 4xx RFC 9457 problem: the request was refused (exit 1), or a 5xx (exit 3). */
export class ProblemError extends CliError {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(
      `${problem.code ?? `http_${status}`}: ${problem.detail ?? problem.title ?? `HTTP ${status}`}`,
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
  token: string;
}

export const DEFAULT_URL = 'http://127.0.0.1:8080';

/** `--url/--token` win over `TOLLGATE_URL`/`TOLLGATE_TOKEN`; no token is a usage error (exit 2). */
export function connection(o: ClientOptions, env: NodeJS.ProcessEnv = process.env): Connection {
  const raw = (o.url ?? env.TOLLGATE_URL ?? DEFAULT_URL).trim();
  let url: URL;
  try {
    url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new CliError(`TOLLGATE_URL / --url must be an http(s) URL, got "${raw}"`, EXIT.usage);
  }
  const token = (o.token ?? env.TOLLGATE_TOKEN ?? '').trim();
  if (!token) {
    throw new CliError(
      'No token: set TOLLGATE_TOKEN or pass --token (for development: export TOLLGATE_TOKEN=$(tollgate token --sub you --role approver))',
      EXIT.usage,
    );
  }
  return { url: url.toString().replace(/\/+$/, ''), token };
}

/**
 * The CLI's client: the SDK's `Tollgate` (HTTP, problems, the event stream, the API's types), with its failures
 * turned into the CLI's exit codes. No retries: a person at a terminal sees a failure at once and runs the
 * command again.
 */
export class ApiClient {
  readonly tollgate: Tollgate;

  constructor(readonly conn: Connection) {
    this.tollgate = new Tollgate({
      url: conn.url,
      token: conn.token,
      channel: 'cli',
      headers: { 'user-agent': 'tollgate-cli' },
      retry: { maxAttempts: 1 },
    });
  }

  /** Runs SDK calls; a refusal becomes a ProblemError (exit 1, or 3 for a 5xx), no answer a CliError (exit 3). */
  async call<T>(work: (tollgate: Tollgate) => Promise<T>): Promise<T> {
    try {
      return await work(this.tollgate);
    } catch (e) {
      throw cliError(e);
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

/** An SDK failure as the CLI reports it. */
export function cliError(e: unknown): unknown {
  if (!(e instanceof TollgateError)) return e;
  if (e.status === 0) return new CliError(e.detail, EXIT.unavailable); // "cannot reach Tollgate at …: ECONNREFUSED"
  return new ProblemError(e.status, e.problem);
}
