/** What the gateway's parts share: a session, a call's context, and the small helpers for results and problems. */
import type { Server, WebStandardStreamableHTTPServerTransport, CallToolResult } from '@modelcontextprotocol/server';
import type { TollgateConversation } from '../../conversation.js';
import type { ConversationUserInput } from '../../types.js';

export const VERSION = '0.5.0';

/** One MCP session's person: the conversation's end user, and their token when they may decide in the chat. */
export interface SessionIdentity {
  user?: ConversationUserInput;
  /** A person's Tollgate token (never an agent's): elicited decisions are made with it, `via: "mcp"`. */
  userToken?: string;
}

export interface Session extends SessionIdentity {
  server: Server;
  /** The person's id behind an HTTP session: later requests must come from the same person. */
  sub?: string;
  conversation?: Promise<TollgateConversation>;
  pending: number;
  transport?: WebStandardStreamableHTTPServerTransport;
  lastSeen: number;
}

export interface CallContext {
  signal: AbortSignal;
  requestId: string | number;
  /** Sends MCP progress when the client asked for it (a progressToken); otherwise does nothing. */
  progress(message: string): void;
}

export type Log = (level: 'info' | 'warn' | 'error', message: string) => void;

type ProgressNotification = {
  method: 'notifications/progress';
  params: { progressToken: string | number; progress: number; message: string };
};

/** Progress must rise with each notification of a request: one counter per call. */
export function progressOf(
  token: string | number | undefined,
  send: (n: ProgressNotification) => Promise<void>,
): (message: string) => void {
  let progress = 0;
  return (message) => {
    if (token === undefined) return;
    progress += 1;
    send({ method: 'notifications/progress', params: { progressToken: token, progress, message } }).catch(
      () => undefined,
    );
  };
}

export function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/**
 * Text from a party the operator does not vouch for (an upstream server, an MCP client), made fit to show people:
 * control and format characters (bidi overrides among them) become spaces, runs of space one, at most `max`
 * characters, quoted, so it reads as a quotation and never as Tollgate's own words.
 */
export function quoted(text: string, max: number): string {
  return JSON.stringify(
    clip(
      text
        .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
      max,
    ),
  );
}

export function refusalResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

export function textOf(result: CallToolResult): string {
  return result.content
    .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
    .map((c) => c.text)
    .join('\n')
    .slice(0, 16_000);
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/** An RFC 9457 problem with Tollgate's stable `code`, as Tollgate itself answers. */
export function problem(status: number, code: string, detail: string, extra: { retryAfter?: number } = {}): Response {
  const headers: Record<string, string> = { 'content-type': 'application/problem+json' };
  if (status === 401) headers['www-authenticate'] = 'Bearer';
  if (extra.retryAfter !== undefined) headers['retry-after'] = String(extra.retryAfter);
  const body = {
    type: `urn:tollgate:problem:${code}`,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    code,
    ...extra,
  };
  return new Response(JSON.stringify(body), { status, headers });
}

export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
