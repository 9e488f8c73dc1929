/**
 * Secret redaction end to end (issue 28 part 1): a tool names secret arguments when it registers (`redact`), the
 * policy names more (a rule's `redact`, `defaults.redact`); calls carrying sentinel secrets (a nested header, a
 * glob-matched key at depth, a rule-named password) are shown masked — `[redacted:hmac-…]` — on every channel and in
 * every export: the REST views and the inbox, the live event stream, webhook deliveries (a real loopback receiver),
 * Slack (the stand-in), email (a real SMTP server), push (the stand-in, decrypted as a browser would), the audit
 * query and both export formats, and no row of any table holds them except the sealed column, which holds them
 * encrypted. A person edits what they see: markers left as shown keep their real values, a typed value becomes one.
 * The claim answers the real arguments, and the receipt binds those.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/infrastructure/config/config';
import { startServer } from '../../src/server';
import { digestJson } from '../../src/infrastructure/persistence/event-store';
import { TollgateGrpc } from '../support/grpc';
import { Client } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { Tollgate } from '../../packages/sdk/src/index.js';
import { TollgateMcpGateway } from '../../packages/sdk/src/integrations/mcp.js';
import { client } from '../support/http';
import { autoAccept, chatSession } from '../support/mcp-chat';
import { stdioUpstream, type StdioUpstream } from '../support/mcp-upstream';
import { cliEnv, runCli } from '../support/pty';
import { PushServiceStandIn, startPushService } from '../support/push-service';
import { startTestServer, TestServer } from '../support/server';
import { SlackStandIn, startSlackStandIn } from '../support/slack-stand-in';
import { SmtpStandIn, startSmtpStandIn } from '../support/smtp-stand-in';
import { collectSseFrames, SseFrame } from '../support/sse';
import { eventually, until } from '../support/wait';
import { startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';

/** Every secret of this suite holds this: nothing outside the claim may show it. */
const SENTINEL = 'xyzzy';
const AUTH = `Bearer ${SENTINEL}-auth-7Qx`;
const TOKEN = `${SENTINEL}-tok-9Zp`;
const PASSWORD = `${SENTINEL}-pass-3Kd`;
const TYPED = `${SENTINEL}-typed-5Wv`;
const COOKIE = `${SENTINEL}-cookie-2Hm`;
const MARKER = /^\[redacted:hmac-[0-9a-f]{12}\]$/;

let slack: SlackStandIn;
let smtp: SmtpStandIn;
let push: PushServiceStandIn;
let hooks: WebhookReceiver;
let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let admin: string;
let ann: string;
const frames: SseFrame[] = [];
let stream: AbortController;
let streaming: Promise<void>;

beforeAll(async () => {
  [slack, smtp, push, hooks] = await Promise.all([
    startSlackStandIn(),
    startSmtpStandIn(),
    startPushService(),
    startWebhookReceiver(),
  ]);
  server = await startTestServer({
    outboxPollMs: 50,
    streamPollMs: 100,
    dataKey: randomBytes(32).toString('base64'),
    email: { smtpUrl: smtp.url, from: 'Tollgate <tollgate@example.com>' },
    push: { subject: 'mailto:ops@example.com' },
    slack: {
      botToken: 'xoxb-redaction',
      signingSecret: 'slack-signing-secret-redaction-0123456789',
      channel: '#approvals',
      apiUrl: slack.url,
      tenant: 'default',
      people: {},
    },
  });
  http = client(server.url);
  agent = await server.token('api-bot', ['agent']);
  admin = await server.token('root', ['admin'], { name: 'Root', email: 'root@example.com' });
  ann = await server.token('ann', ['approver'], { name: 'Ann', email: 'ann@example.com' });
  for (const t of [admin, ann]) expect((await http.get('/v1/me', t)).status).toBe(200);
  const browser = push.subscribe('ann-phone');
  expect((await http.post('/v1/me/push-subscriptions', ann, { ...browser.toJSON(), userAgent: 'phone' })).status).toBe(
    201,
  );
  expect((await http.post('/v1/webhooks', admin, { url: hooks.url, events: ['*'] })).status).toBe(201);

  const tool = await http.put('/v1/tools/call_api', admin, {
    description: 'Calls an HTTP API',
    redact: ['headers.authorization', '*token*'],
  });
  expect(tool.status).toBe(201);
  expect(tool.body.redact).toEqual(['headers.authorization', '*token*']);
  const policy = await http.put('/v1/policy', admin, {
    defaults: { redact: ['cookie'] },
    rules: [
      { match: 'call_api', level: 'confirm', approvers: ['approver'], redact: ['password'] },
      { match: 'fetch_page', level: 'automatic' },
    ],
  });
  expect(policy.status).toBe(200);

  // The live stream, from the start: every event of the suite passes through it.
  stream = new AbortController();
  const res = await fetch(`${server.url}/v1/events/stream?lastEventId=0`, {
    headers: { authorization: `Bearer ${admin}`, accept: 'text/event-stream' },
    signal: stream.signal,
  });
  expect(res.status).toBe(200);
  streaming = collectSseFrames(res.body!, frames).catch(() => undefined);
}, 60_000);

afterAll(async () => {
  stream?.abort();
  await streaming;
  await server?.stop();
  await Promise.all([slack?.close(), smtp?.close(), push?.close(), hooks?.close()]);
});

const realArguments = {
  url: 'https://api.example.com/v1/charges',
  headers: { Authorization: AUTH, accept: 'application/json' },
  body: { amount: 1200, nested: { refresh_token: TOKEN, keep: 'visible' } },
  password: PASSWORD,
  api_token: `${SENTINEL}-old-1Aa`,
  cookie: COOKIE,
};

/** Everything a body shows, as text. */
const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
function mustNotShow(where: string, v: unknown) {
  const shown = text(v) ?? '';
  if (shown.toLowerCase().includes(SENTINEL)) throw new Error(`${where} shows a secret: ${shown.slice(0, 2000)}`);
}

let callId: string;
let shown: Record<string, any>;
let claimed: { arguments: Record<string, unknown>; receipt: string };

describe('secret arguments', () => {
  it('are masked in the proposal’s answer, with equal digests for equal secrets, and unmasked values untouched', async () => {
    expect((await http.post('/v1/conversations', agent, { id: 'redact-1' })).status).toBe(201);
    const res = await http.post('/v1/conversations/redact-1/tool-calls', agent, {
      toolCalls: [{ toolName: 'call_api', arguments: realArguments, display: { title: 'Charge the card' } }],
    });
    expect(res.status).toBe(201);
    const call = res.body.toolCalls[0];
    expect(call.status).toBe('pending');
    callId = call.id;
    shown = call.arguments;
    mustNotShow('the proposal answer', res.body);
    expect(shown.headers.Authorization).toMatch(MARKER);
    expect(shown.body.nested.refresh_token).toMatch(MARKER);
    expect(shown.password).toMatch(MARKER); // the policy rule's name
    expect(shown.cookie).toMatch(MARKER); // the policy default's name
    expect(shown.api_token).toMatch(MARKER); // the tool's glob at the top
    expect(shown.headers.accept).toBe('application/json');
    expect(shown.body).toMatchObject({ amount: 1200, nested: { keep: 'visible' } });
    expect(shown.url).toBe(realArguments.url);
  });

  it('are masked in the call and conversation views and the inbox, before anyone decides', async () => {
    const view = await http.get(`/v1/tool-calls/${callId}`, ann);
    expect(view.status).toBe(200);
    expect(view.body.arguments).toEqual(shown);
    mustNotShow('the call view', view.body);
    const conv = await http.get('/v1/conversations/redact-1', ann);
    expect(conv.status).toBe(200);
    mustNotShow('the conversation view', conv.body);
    const inbox = await http.get('/v1/approvals', ann);
    expect(inbox.status).toBe(200);
    expect(JSON.stringify(inbox.body)).toContain(callId);
    mustNotShow('the inbox', inbox.body);
    // The CLI lists what waits (as a table, and as JSON): the markers, never the values.
    for (const args of [['pending'], ['pending', '--json']]) {
      const run = await runCli(args, cliEnv({ url: server.url, token: ann }));
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(callId);
      mustNotShow(`the CLI (${args.join(' ')})`, run.stdout + run.stderr);
    }
  });

  it('reach Slack, email and push masked', async () => {
    const posted = await eventually(
      () => slack.callsTo('chat.postMessage').find((c) => JSON.stringify(c.args).includes(callId)),
      15_000,
      'the Slack message',
    );
    expect(JSON.stringify(posted.args)).toContain('[redacted:hmac-');
    const mail = await eventually(
      () => smtp.messages.find((m) => m.text?.includes(callId)),
      15_000,
      'the email to Ann',
    );
    expect(mail.text).toContain('[redacted:hmac-');
    await eventually(
      () => push.deliveries.find((d) => d.path === '/push/ann-phone' && text(d.message).includes(callId)),
      15_000,
      'the push to Ann',
    );
  });

  it('a person edits what they see: a marker left as shown keeps its real value, a typed value is masked again', async () => {
    const edited = { ...shown, api_token: TYPED, body: { ...shown.body, amount: 1300 } };
    const res = await http.post(`/v1/tool-calls/${callId}/decision`, ann, { decision: 'approve', arguments: edited });
    expect(res.status).toBe(200);
    mustNotShow('the decision answer', res.body);
    const recorded = res.body.decision.editedArguments;
    expect(recorded.api_token).toMatch(MARKER);
    expect(recorded.api_token).not.toBe(shown.api_token);
    expect(recorded.headers.Authorization).toBe(shown.headers.Authorization);
    expect(recorded.body.amount).toBe(1300);
  });

  it('the claim answers the real arguments, and the receipt binds them', async () => {
    const res = await http.post(`/v1/tool-calls/${callId}/execution`, agent);
    expect(res.status).toBe(200);
    claimed = res.body;
    const real = {
      ...realArguments,
      api_token: TYPED,
      body: { ...realArguments.body, amount: 1300 },
    };
    expect(claimed.arguments).toEqual(real);
    const payload = JSON.parse(Buffer.from(claimed.receipt.split('.')[1], 'base64url').toString('utf8'));
    expect(payload.args).toBe(digestJson(real));
    mustNotShow('the claim’s call view', (res.body as { toolCall: unknown }).toolCall);
    expect((await http.post(`/v1/tool-calls/${callId}/result`, agent, { outcome: 'succeeded' })).status).toBe(200);
  });

  it('a call the policy runs at once is claimed with its real arguments in the proposal’s answer', async () => {
    const res = await http.post('/v1/conversations/redact-1/tool-calls', agent, {
      toolCalls: [{ toolName: 'fetch_page', arguments: { url: 'https://example.com', cookie: COOKIE } }],
      claim: true,
    });
    expect(res.status).toBe(201);
    expect(res.body.toolCalls[0].arguments.cookie).toMatch(MARKER);
    expect(res.body.claims[0].arguments).toEqual({ url: 'https://example.com', cookie: COOKIE });
    const payload = JSON.parse(Buffer.from(res.body.claims[0].receipt.split('.')[1], 'base64url').toString('utf8'));
    expect(payload.args).toBe(digestJson({ url: 'https://example.com', cookie: COOKIE }));
    mustNotShow('the proposal’s call view', res.body.toolCalls);
    const id = res.body.toolCalls[0].id;
    expect((await http.post(`/v1/tool-calls/${id}/result`, agent, { outcome: 'succeeded' })).status).toBe(200);
  });

  it('no channel, stream, audit query or export shows a secret', async () => {
    // Everything has gone out: the webhook has the completion, the stream too.
    await eventually(
      () => hooks.received.find((d) => d.json.data?.toolCallId === callId && d.json.type === 'ToolCallCompleted'),
      15_000,
      `the completion webhook (received: ${hooks.received.map((d) => d.json.type).join(', ')})`,
    );
    await until(() => frames.some((f) => f.event === 'ToolCallCompleted'), 15_000, 'the completion on the stream');
    expect(hooks.received.length).toBeGreaterThan(3);
    mustNotShow(
      'a webhook delivery',
      hooks.received.map((d) => d.json),
    );
    mustNotShow('the event stream', frames);
    mustNotShow(
      'Slack',
      [...slack.callsTo('chat.postMessage'), ...slack.callsTo('chat.update')].map((c) => c.args),
    );
    mustNotShow(
      'email',
      smtp.messages.map((m) => [m.subject, m.text, m.html]),
    );
    mustNotShow(
      'push',
      push.deliveries.map((d) => d.text),
    );
    const trail = await http.get(`/v1/audit/events?conversationId=redact-1`, admin);
    expect(trail.status).toBe(200);
    expect(trail.body.events.length).toBeGreaterThan(4);
    mustNotShow('the audit query', trail.body);
    for (const format of ['ndjson', 'csv']) {
      const res = await fetch(`${server.url}/v1/audit/export?format=${format}&conversationId=redact-1`, {
        headers: { authorization: `Bearer ${admin}` },
      });
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(body).toContain('[redacted:hmac-');
      mustNotShow(`the ${format} export`, body);
    }
    mustNotShow('the call view after the run', (await http.get(`/v1/tool-calls/${callId}`, admin)).body);
  });

  it('no row of any table holds a secret in clear; the sealed column holds them encrypted', async () => {
    const tables: Array<{ table_name: string }> = await server.dataSource.query(
      `SELECT table_name FROM information_schema.tables
        WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
    );
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(['events', 'tool_calls']));
    for (const { table_name } of tables) {
      const [{ n }] = await server.dataSource.query(
        `SELECT count(*)::int AS n FROM "${table_name}" t WHERE t::text ILIKE $1`,
        [`%${SENTINEL}%`],
      );
      if (n !== 0) throw new Error(`${n} row(s) of ${table_name} hold a secret in clear`);
    }
    // events is partitioned: its partitions are base tables too, and its parent reads them all.
    const [{ n: events }] = await server.dataSource.query(
      `SELECT count(*)::int AS n FROM events e WHERE e::text ILIKE $1`,
      [`%${SENTINEL}%`],
    );
    expect(events).toBe(0);
    const sealed: Array<{ sealed_arguments: string | null }> = await server.dataSource.query(
      `SELECT sealed_arguments FROM tool_calls WHERE tenant_id = 'default' AND id = $1`,
      [callId],
    );
    expect(sealed[0].sealed_arguments).toMatch(/^v1\.[0-9a-f]{8}\./);
  });
});

describe('an edit of a tool with an input schema', () => {
  it('is checked with its secrets restored: a kept marker passes for the integer it stands for', async () => {
    const tool = await http.put('/v1/tools/set_pin', admin, {
      redact: ['pin'],
      inputSchema: {
        type: 'object',
        properties: { pin: { type: 'integer' }, note: { type: 'string' } },
        required: ['pin'],
      },
    });
    expect(tool.status).toBe(201);
    const policy = await http.put('/v1/policy', admin, {
      rules: [{ match: 'set_pin', level: 'confirm', approvers: ['approver'] }],
    });
    expect(policy.status).toBe(200);
    expect((await http.post('/v1/conversations', agent, { id: 'redact-pin' })).status).toBe(201);
    const proposed = await http.post('/v1/conversations/redact-pin/tool-calls', agent, {
      toolCalls: [{ toolName: 'set_pin', arguments: { pin: 4821, note: 'old' } }],
    });
    const call = proposed.body.toolCalls[0];
    expect(call.arguments.pin).toMatch(MARKER);
    const wrong = await http.post(`/v1/tool-calls/${call.id}/decision`, ann, {
      decision: 'approve',
      arguments: { ...call.arguments, pin: 'not a number' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('arguments_invalid');
    const kept = await http.post(`/v1/tool-calls/${call.id}/decision`, ann, {
      decision: 'approve',
      arguments: { ...call.arguments, note: 'new' },
    });
    expect(kept.status).toBe(200);
    const claim = await http.post(`/v1/tool-calls/${call.id}/execution`, agent);
    expect(claim.body.arguments).toEqual({ pin: 4821, note: 'new' });
  });
});

describe('a tool’s redact list', () => {
  it('is bounded: at most 50 names of at most 200 characters, without empty path segments (400 validation_failed)', async () => {
    const many = await http.put('/v1/tools/too_many', admin, { redact: Array.from({ length: 51 }, (_, i) => `k${i}`) });
    expect(many.status).toBe(400);
    expect(many.body.code).toBe('validation_failed');
    const long = await http.put('/v1/tools/too_long', admin, { redact: ['x'.repeat(201)] });
    expect(long.status).toBe(400);
    const empty = await http.put('/v1/tools/empty_segment', admin, { redact: ['headers..authorization'] });
    expect(empty.status).toBe(400);
    expect(empty.body.errors).toEqual([expect.objectContaining({ path: 'redact[0]' })]);
    const notStrings = await http.put('/v1/tools/not_strings', admin, { redact: [3] });
    expect(notStrings.status).toBe(400);
  });

  it('is registered over gRPC too, and shown on the tool', async () => {
    const rpc = new TollgateGrpc(server.grpcAddress!);
    try {
      const answer = await rpc.call(
        'RegisterTool',
        { name: 'grpc_api', redact: ['headers.authorization', '*secret*'] },
        admin,
      );
      expect(answer.tool.redact).toEqual(['headers.authorization', '*secret*']);
      expect((await http.get('/v1/tools/grpc_api', admin)).body.redact).toEqual(['headers.authorization', '*secret*']);
    } finally {
      rpc.close();
    }
  });
});

describe('beside DATABASE_URL without a data key', () => {
  (process.env.DATABASE_URL ? it : it.skip)(
    'refuses a call whose arguments hold a secret (503 data_key_missing) and records nothing; other calls go on',
    async () => {
      const keyless = await startTestServer({ dataKey: undefined, dataKeyFile: undefined, grpcPort: undefined });
      try {
        const api = client(keyless.url);
        const root = await keyless.token('root', ['admin']);
        const bot = await keyless.token('bot', ['agent']);
        expect((await api.put('/v1/tools/call_api', root, { redact: ['password'] })).status).toBe(201);
        expect((await api.post('/v1/conversations', bot, { id: 'keyless' })).status).toBe(201);
        const refused = await api.post('/v1/conversations/keyless/tool-calls', bot, {
          toolCalls: [{ toolName: 'call_api', arguments: { password: `${SENTINEL}-keyless` } }],
        });
        expect(refused.status).toBe(503);
        expect(refused.body.code).toBe('data_key_missing');
        const [{ n }] = await keyless.dataSource.query(
          `SELECT count(*)::int AS n FROM tool_calls WHERE tenant_id = 'default'`,
        );
        expect(n).toBe(0);
        const plain = await api.post('/v1/conversations/keyless/tool-calls', bot, {
          toolCalls: [{ toolName: 'call_api', arguments: { url: 'https://example.com' } }],
        });
        expect(plain.status).toBe(201);
      } finally {
        await keyless.stop();
      }
    },
  );
});

describe('a configured data key', () => {
  it('that is not 32 bytes stops the start with a one-line error that does not quote it', async () => {
    const bad = 'c2hvcnQta2V5';
    // Refused before any database opens: nothing to clean up but a scratch data dir.
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bad-data-key-'));
    const e = await startServer({
      ...loadConfig({}),
      host: '127.0.0.1',
      port: 0,
      grpcPort: undefined,
      dataDir,
      dataKey: bad,
    }).then(
      async (s) => {
        await s.close();
        return undefined;
      },
      (err: Error) => err,
    );
    rmSync(dataDir, { recursive: true, force: true });
    expect(e).toBeInstanceOf(ConfigError);
    expect(e!.message).toMatch(/^TOLLGATE_DATA_KEY: key 1 is not 32 bytes/);
    expect(e!.message).not.toContain(bad);
  });
});

describe('MCP chat through the gateway', () => {
  let mcpServer: TestServer;
  let gateway: TollgateMcpGateway;
  let files: StdioUpstream;
  const clients: Client[] = [];

  beforeAll(async () => {
    mcpServer = await startTestServer({ dataKey: randomBytes(32).toString('base64'), grpcPort: undefined });
    const api = client(mcpServer.url);
    const root = await mcpServer.token('ann', ['admin'], { name: 'Ann' });
    const put = await api.put('/v1/policy', root, {
      defaults: { redact: ['path'] },
      rules: [{ match: 'files__*_file', level: 'confirm', approvers: ['requester', 'admin'] }],
    });
    expect(put.status).toBe(200);
    files = await stdioUpstream('files');
    gateway = await TollgateMcpGateway.start({
      tollgate: new Tollgate({ url: mcpServer.url, token: await mcpServer.token('mcp-gateway', ['agent']) }),
      upstreams: [
        {
          name: 'files',
          command: files.command,
          args: files.args,
          env: files.env,
          namespace: true,
          trustAnnotations: true,
        },
      ],
      inboxUrl: 'https://tollgate.example.com',
      progressIntervalMs: 100,
      log: () => undefined,
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await gateway?.close();
    await mcpServer?.stop();
  });

  it('the chat’s form shows the arguments masked; the upstream runs with the real ones once a person approves', async () => {
    const carol = { id: 'carol', name: 'Carol', roles: ['approver'] };
    const { client: chat, forms } = await chatSession(
      gateway,
      { user: carol, userToken: await mcpServer.token('carol', ['approver'], { name: 'Carol' }) },
      autoAccept,
    );
    clients.push(chat);
    const path = `/chat/${SENTINEL}-mcp-4Rt`;
    const deleting = chat.callTool({ name: 'files__delete_file', arguments: { path } });
    const api = client(mcpServer.url);
    const root = await mcpServer.token('ann', ['admin'], { name: 'Ann' });
    let id: string | undefined;
    await until(
      async () => {
        const r = await api.get('/v1/approvals', root);
        id = r.body.items.find((a: { toolName: string }) => a.toolName === 'files__delete_file')?.id;
        return !!id;
      },
      20_000,
      'the held call',
    );
    await until(() => forms.length > 0, 20_000, 'the form in the chat');
    expect(forms[0].message).toContain('[redacted:hmac-');
    mustNotShow('the MCP chat form', forms);
    expect((await api.post(`/v1/tool-calls/${id}/decision`, root, { decision: 'approve' })).status).toBe(200);
    const result = (await deleting) as CallToolResult;
    expect(result.content.map((c) => (c.type === 'text' ? c.text : '')).join('')).toBe(`files: deleted ${path}`);
  });
});
