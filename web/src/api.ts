import type { Approval, AuditEvent, Conversation, DecisionBody, Page, Problem, TenantStatus, Tool, ToolCall, UiConfig } from './types';

/** A refused request, carrying the API's RFC 9457 problem. */
export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail ?? problem.title ?? `HTTP ${problem.status}`);
  }
  get status(): number {
    return this.problem.status;
  }
}

async function parse<T>(res: Response): Promise<T> {
  const text = await res.text();
  const body: unknown = text && /json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : undefined;
  if (!res.ok) {
    const p = (body ?? {}) as Partial<Problem>;
    throw new ApiError({ ...p, status: res.status, code: p.code ?? `http_${res.status}`, detail: p.detail ?? (text || res.statusText) });
  }
  return body as T;
}

/** Routes the page may call before it has a token. */
export const publicApi = {
  config: (): Promise<UiConfig> => fetch('/ui/config', { headers: { accept: 'application/json' } }).then((r) => parse<UiConfig>(r)),
  devToken: (body: { sub: string; name?: string; roles: string[]; tenant?: string }): Promise<{ token: string }> =>
    fetch('/ui/dev-token', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) }).then((r) => parse<{ token: string }>(r)),
};

export type Api = ReturnType<typeof createApi>;

/**
 * The /v1 API as the signed-in person. Every request carries the bearer token; decisions say they came
 * through the web inbox (`X-Tollgate-Channel: web`). A 401 signs the page out.
 */
export function createApi(token: string, onUnauthenticated: (p: Problem) => void, onServerTime: (skewMs: number) => void = () => undefined) {
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json', 'x-tollgate-channel': 'web' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const sent = Date.now();
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const date = res.headers.get('date');
    if (date) onServerTime(Date.parse(date) + 500 - (sent + Date.now()) / 2); // the Date header has whole seconds
    try {
      return await parse<T>(res);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) onUnauthenticated(e.problem);
      throw e;
    }
  }

  async function all<T>(path: string): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | null = null;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const page: Page<T> = await call<Page<T>>('GET', `${path}${sep}limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      items.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor && items.length < 10_000);
    return items;
  }

  const id = encodeURIComponent;
  return {
    /** What the caller may decide, oldest first. */
    pendingApprovals: () => all<Approval>('/v1/approvals?status=pending'),
    tools: () => all<Tool>('/v1/tools'),
    toolCall: (callId: string) => call<ToolCall>('GET', `/v1/tool-calls/${id(callId)}`),
    conversation: (convId: string) => call<Conversation>('GET', `/v1/conversations/${id(convId)}`),
    status: () => call<TenantStatus>('GET', '/v1/status'),
    decide: (callId: string, body: DecisionBody) => call<ToolCall>('POST', `/v1/tool-calls/${id(callId)}/decision`, body),
    /** Auditors and admins only. */
    auditEvents: async (convId: string): Promise<AuditEvent[]> => {
      const events: AuditEvent[] = [];
      let cursor: string | null = null;
      do {
        const page: { events: AuditEvent[]; nextCursor: string | null } = await call('GET', `/v1/audit/events?conversationId=${id(convId)}&limit=1000${cursor ? `&cursor=${id(cursor)}` : ''}`);
        events.push(...page.events);
        cursor = page.nextCursor;
      } while (cursor && events.length < 10_000);
      return events;
    },
  };
}
