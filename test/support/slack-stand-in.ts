import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { slackSignature } from '../../src/adapters/slack/slack-signature';

/** One Web API call as the stand-in received it: the method, its arguments (JSON fields decoded) and the bearer token. */
export interface SlackCall {
  method: string;
  args: Record<string, any>;
  token?: string;
  at: number;
  /** What chat.postMessage answered: the message's channel id and ts, as a click on it names them. */
  posted?: { channel: string; ts: string };
}

/**
 * A stand-in for Slack's Web API on 127.0.0.1: records every call (chat.postMessage, chat.update,
 * chat.postEphemeral, views.open…) and answers `{ok: true, channel, ts}` like Slack does, or fails
 * on request (an HTTP status, or `{ok: false, error}`).
 */
export interface SlackStandIn {
  /** Base URL for SLACK_API_URL, ending in `/api/`. */
  url: string;
  calls: SlackCall[];
  /** The next `times` calls of `method` fail: with an HTTP status, or Slack's `{ok: false, error}`. */
  fail(method: string, times: number, how: { status: number } | { error: string }): void;
  callsTo(method: string): SlackCall[];
  /**
   * A member of the workspace, as `users.info` answers them (`users:read.email`): their email and whether Slack
   * confirmed it (default true). A user not added answers `{ok: false, error: 'user_not_found'}`.
   */
  addUser(id: string, user: { email?: string; emailConfirmed?: boolean; name?: string; deleted?: boolean }): void;
  /** The message posted about a call or question (its id in the text or a button), as a click on it names it. */
  messageAbout(id: string): { channel: string; ts: string } | undefined;
  close(): Promise<void>;
}

export const SLACK_CHANNEL_ID = 'C0TOLLGATE';

export async function startSlackStandIn(): Promise<SlackStandIn> {
  const calls: SlackCall[] = [];
  const failures: Array<{ method: string; left: number; how: { status: number } | { error: string } }> = [];
  let ts = 1_700_000_000;
  const users = new Map<string, { email?: string; emailConfirmed?: boolean; name?: string; deleted?: boolean }>();
  const server: Server = createServer(async (req, res) => {
    const method = (req.url ?? '').replace(/^\/api\//, '').split('?')[0];
    const args = parseArgs(req, await readBody(req));
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    calls.push({ method, args, token, at: Date.now() });
    const failure = failures.find((f) => f.method === method && f.left > 0);
    if (failure) {
      failure.left -= 1;
      if ('status' in failure.how) {
        res.writeHead(failure.how.status).end('unavailable');
        return;
      }
      return json(res, { ok: false, error: failure.how.error });
    }
    ts += 1;
    if (method === 'chat.postMessage') {
      // A channel id is answered as given (one Slack app, a channel per tenant); a #name as the one test channel.
      const channel = /^[CGD][A-Z0-9]+$/.test(String(args.channel)) ? String(args.channel) : SLACK_CHANNEL_ID;
      calls[calls.length - 1].posted = { channel, ts: `${ts}.000100` };
      return json(res, { ok: true, channel, ts: `${ts}.000100`, message: { text: args.text } });
    }
    if (method === 'chat.update') return json(res, { ok: true, channel: args.channel, ts: args.ts, text: args.text });
    if (method === 'chat.postEphemeral') return json(res, { ok: true, message_ts: `${ts}.000200` });
    if (method === 'views.open') return json(res, { ok: true, view: { id: `V${ts}` } });
    if (method === 'users.info') {
      const u = users.get(String(args.user));
      if (!u) return json(res, { ok: false, error: 'user_not_found' });
      return json(res, {
        ok: true,
        user: {
          id: args.user,
          name: u.name ?? String(args.user).toLowerCase(),
          deleted: u.deleted ?? false,
          is_bot: false,
          is_email_confirmed: u.emailConfirmed ?? true,
          profile: u.email ? { email: u.email } : {},
        },
      });
    }
    return json(res, { ok: true });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/`,
    calls,
    fail: (method, times, how) => void failures.push({ method, left: times, how }),
    callsTo: (method) => calls.filter((c) => c.method === method),
    addUser: (id, user) => void users.set(id, user),
    messageAbout: (id) =>
      calls.find((c) => c.method === 'chat.postMessage' && c.posted && JSON.stringify(c.args).includes(id))?.posted,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The SDK posts form fields with nested values JSON-encoded (blocks, view); JSON bodies are taken as they are. */
function parseArgs(req: IncomingMessage, body: string): Record<string, any> {
  if (/json/.test(req.headers['content-type'] ?? '')) return body ? JSON.parse(body) : {};
  const out: Record<string, any> = {};
  for (const [k, v] of new URLSearchParams(body)) {
    out[k] = /^[[{]/.test(v) ? JSON.parse(v) : v;
  }
  return out;
}

function json(res: import('node:http').ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

/** A request as Slack would post it to the interactivity URL: form-encoded `payload`, signed with the signing secret. */
export function slackRequest(
  signingSecret: string,
  payload: unknown,
  opts: { timestamp?: number; signature?: string; omitSignature?: boolean } = {},
): { body: string; headers: Record<string, string> } {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const timestamp = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    'x-slack-request-timestamp': timestamp,
  };
  if (!opts.omitSignature)
    headers['x-slack-signature'] = opts.signature ?? slackSignature(signingSecret, timestamp, body);
  return { body, headers };
}

/** A click on one of the message's buttons, as Slack reports it (block_actions). */
export function buttonClick(
  user: { id: string; name?: string },
  actionId: string,
  toolCallId: string,
  message?: { channel: string; ts: string },
) {
  return {
    type: 'block_actions',
    user: { id: user.id, username: user.name, name: user.name, team_id: 'T0TEAM' },
    team: { id: 'T0TEAM' },
    channel: { id: message?.channel ?? SLACK_CHANNEL_ID },
    container: { type: 'message', channel_id: message?.channel ?? SLACK_CHANNEL_ID, message_ts: message?.ts },
    message: message ? { ts: message.ts } : undefined,
    trigger_id: `trigger-${Math.random().toString(36).slice(2)}`,
    actions: [{ action_id: actionId, value: toolCallId, type: 'button', block_id: 'tollgate_decision' }],
  };
}

/** The reject modal submitted with a reason. */
export function rejectSubmission(
  user: { id: string; name?: string },
  view: { callback_id: string; private_metadata: string },
  reason: string | null,
) {
  return {
    type: 'view_submission',
    user: { id: user.id, username: user.name, name: user.name },
    team: { id: 'T0TEAM' },
    view: { ...view, state: { values: { reason: { reason: { type: 'plain_text_input', value: reason } } } } },
  };
}
