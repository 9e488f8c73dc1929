/**
 * The CLI's way to the server: HTTP only, as any other client (CONTRACT §2–§10). Decisions, halts and resumes
 * say `X-Tollgate-Channel: cli`, so they are recorded with `via: "cli"`.
 */

/** Exit codes of the client commands (README "CLI"). */
export const EXIT = { ok: 0, refused: 1, usage: 2, unavailable: 3 } as const;

/** A failure that ends the command with an exit code and one line on stderr. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode: number) {
    super(message);
  }
}

/** The server answered with a 4xx RFC 9457 problem: the request was refused (exit 1), or a 5xx (exit 3). */
export class ProblemError extends CliError {
  constructor(readonly status: number, readonly problem: Problem) {
    super(`${problem.code ?? `http_${status}`}: ${problem.detail ?? problem.title ?? `HTTP ${status}`}`, status >= 500 ? EXIT.unavailable : EXIT.refused);
  }
}

export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  [key: string]: unknown;
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
    throw new CliError('No token: set TOLLGATE_TOKEN or pass --token (for development: export TOLLGATE_TOKEN=$(tollgate token --sub you --role approver))', EXIT.usage);
  }
  return { url: url.toString().replace(/\/+$/, ''), token };
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is with this content type (YAML policies). */
  raw?: { text: string; contentType: string };
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export class ApiClient {
  constructor(readonly conn: Connection) {}

  get<T>(path: string, opts: RequestOptions = {}): Promise<T> {
    return this.request<T>('GET', path, opts);
  }

  post<T>(path: string, body: unknown, opts: RequestOptions = {}): Promise<T> {
    return this.request<T>('POST', path, { ...opts, body });
  }

  put<T>(path: string, opts: RequestOptions): Promise<T> {
    return this.request<T>('PUT', path, opts);
  }

  /** Records `via: "cli"` on the decision. Answers the tool call as it now stands. */
  decide<T = ToolCall>(id: string, body: { decision: 'approve' | 'reject' | 'always_allow'; reason?: string; arguments?: Record<string, unknown>; scope?: string }): Promise<T> {
    return this.post<T>(`/v1/tool-calls/${encodeURIComponent(id)}/decision`, body, { headers: { 'x-tollgate-channel': 'cli' } });
  }

  /** Every pending call the caller may decide, oldest first (all pages). */
  async approvals(): Promise<Approval[]> {
    const items: Approval[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.get<{ items: Approval[]; nextCursor: string | null }>('/v1/approvals', { query: { status: 'pending', limit: 1000, cursor } });
      items.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && items.length < 10_000);
    return items;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { authorization: `Bearer ${this.conn.token}`, 'user-agent': 'tollgate-cli', ...extra };
  }

  url(path: string, query: RequestOptions['query'] = {}): string {
    const u = new URL(this.conn.url + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') u.searchParams.set(k, String(v));
    return u.toString();
  }

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const headers = this.headers({ accept: 'application/json', ...(opts.headers ?? {}) });
    let body: string | undefined;
    if (opts.raw) {
      body = opts.raw.text;
      headers['content-type'] = opts.raw.contentType;
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    let res: Response;
    try {
      res = await fetch(this.url(path, opts.query), { method, headers, body, signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000) });
    } catch (e) {
      throw unreachable(this.conn.url, e);
    }
    const text = await res.text().catch(() => '');
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const problem: Problem = parsed && typeof parsed === 'object' ? (parsed as Problem) : { title: res.statusText, detail: text.slice(0, 200) || `HTTP ${res.status}` };
      throw new ProblemError(res.status, problem);
    }
    return parsed as T;
  }
}

export function unreachable(url: string, e: unknown): CliError {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  const why = err.name === 'TimeoutError' ? 'no answer in time' : (err.cause?.code ?? err.cause?.message ?? err.message);
  return new CliError(`cannot reach Tollgate at ${url}: ${why}`, EXIT.unavailable);
}

/** The parts of a tool call the CLI shows (CONTRACT §6). */
export interface ToolCall {
  id: string;
  externalId?: string;
  conversationId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  reason?: string;
  confidence?: number;
  estimatedCost?: number;
  display?: { title?: string; summary?: string; fields?: Array<{ label: string; value: string }> };
  status: string;
  policy: { level: string; rule: number | null; policyVersion: number; reason: string; toolFlags?: { destructive?: boolean } };
  approval?: { approvers: string[]; expiresAt: string };
  decision?: { outcome: string; by: { id: string; name?: string; via: string }; at: string; reason?: string; editedArguments?: Record<string, unknown> };
  createdAt: string;
}

export interface Approval extends ToolCall {
  conversation: { id: string; agentId: string; user: { id: string; name?: string; roles?: string[] } | null; title: string | null };
}
