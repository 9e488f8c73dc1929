/** A small fetch wrapper for end-to-end tests: JSON in, status + JSON out. */
export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export function client(baseUrl: string) {
  async function call<T = any>(
    method: string,
    path: string,
    opts: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
  ): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if (/json/.test(res.headers.get('content-type') ?? '')) parsed = text ? JSON.parse(text) : undefined;
    return { status: res.status, body: parsed as T, headers: res.headers };
  }
  return {
    get: <T = any>(path: string, token?: string, headers?: Record<string, string>) =>
      call<T>('GET', path, { token, headers }),
    post: <T = any>(path: string, token: string | undefined, body?: unknown, headers?: Record<string, string>) =>
      call<T>('POST', path, { token, body, headers }),
    put: <T = any>(path: string, token: string | undefined, body?: unknown, headers?: Record<string, string>) =>
      call<T>('PUT', path, { token, body, headers }),
    call,
  };
}
