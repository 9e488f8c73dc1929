/**
 * The MCP gateway's newer MCP behaviours, through a real Tollgate, real upstream MCP servers (a stateful one over
 * stdio that grows and shrinks what it offers, and one over Streamable HTTP) and the MCP SDK's own Client:
 * - URL-mode elicitation: a held call the person may decide is sent to its card in the inbox when the chat may not
 *   approve it, the session has no person's token, or the client takes no form; opening the link decides nothing,
 *   the inbox does, and the client is told when the elicitation is complete. A form-only client keeps the forms.
 * - Tools a policy rule denies whatever the arguments are left out of tools/list (and listed again when the rule
 *   goes), while a call to one by name is still proposed, denied and never reaches the upstream.
 * - An upstream's changed tool list is followed: new tools registered with Tollgate with the flags given at start,
 *   every session told, removed tools gone, and a new name that would take another upstream's is refused.
 * - Resources and prompts pass through (unless turned off per upstream), with their change notices, and nothing of
 *   them is proposed to Tollgate.
 */
import { Client, InMemoryTransport, ProtocolError, ResourceNotFoundError } from '@modelcontextprotocol/client';
import type {
  CallToolResult,
  ElicitRequestFormParams,
  ElicitRequestParams,
  ElicitResult,
} from '@modelcontextprotocol/client';
import { Tollgate, type Approval, type PolicyDocument, type PolicyRule } from '@tollgate/sdk';
import {
  TollgateMcpGateway,
  type McpGatewayOptions,
  type SessionIdentity,
  type StdioUpstream,
} from '../../src/integrations/mcp.js';
import { liveUpstream, type LiveUpstream } from '../../../../test/support/mcp-live-upstream.js';
import { httpUpstream, toolsServer, type HttpUpstream } from '../../../../test/support/mcp-upstream.js';
import { registerPasskey, SoftAuthenticator, startTestServer, until, type TestServer } from '../support.js';
import { TEST_SECRET } from '../../../../test/support/server.js';
import { mintToken } from '../../../../src/infrastructure/auth/jwt-verifier.js';

let server: TestServer;
let ann: Tollgate;
let annToken: string;
/**
 * Ann's own token from her identity provider (not a Tollgate credential): a session whose conversation user carries
 * it has a user Tollgate verified, whom a rule with `stepUp: passkey` keeps among its approvers as the requester.
 */
let annIdToken: string;
let agentToken: string;
let annKey: SoftAuthenticator;
/** An upstream over Streamable HTTP whose only tool, read_file, a live upstream may try to take the name of. */
let files: HttpUpstream;
const ANN = { id: 'ann', name: 'Ann', roles: ['admin'] };

/**
 * The live upstream's tools that change what it offers (grow, shrink, add_*) run at once; the requester may decide
 * move_file, wire_money (only with a passkey) and delete_file. Tests that change the policy put this one back.
 */
const BASE: PolicyDocument = {
  rules: [
    { match: '*grow', level: 'automatic' },
    { match: '*shrink', level: 'automatic' },
    { match: '*add_*', level: 'automatic' },
    { match: '*move_file', level: 'confirm', approvers: ['requester', 'admin'] },
    { match: '*wire_money', level: 'confirm', approvers: ['requester', 'admin'], stepUp: 'passkey' },
    { match: '*delete_file', level: 'confirm', approvers: ['requester', 'admin'] },
  ],
};
const withRules = (...rules: PolicyRule[]): PolicyDocument => ({ rules: [...BASE.rules!, ...rules] });

/** Bearer tokens are for Tollgate's API; user tokens (a person's, from their identity provider) for the agent app. */
const API = 'tollgate-api';
const AGENT_APP = 'agent-app';
const mint = (sub: string, roles: string[], name: string, audience = API) =>
  mintToken(TEST_SECRET, { sub, roles, name }, '1h', { audience });

beforeAll(async () => {
  server = await startTestServer({
    auth: { secret: TEST_SECRET, audience: API, userTokenAudiences: [AGENT_APP], devSecret: false },
  });
  annToken = await mint('ann', ['admin'], 'Ann');
  annIdToken = await mint('ann', ['admin'], 'Ann', AGENT_APP);
  agentToken = await mint('mcp-gateway', ['agent'], 'MCP gateway');
  ann = new Tollgate({ url: server.url, token: annToken, channel: 'web' });
  await ann.putPolicy(BASE);
  annKey = await registerPasskey(server, ann);
  files = await httpUpstream('files', toolsServer([{ name: 'read_file', annotations: { readOnlyHint: true } }]));
}, 60_000);

const gateways: TollgateMcpGateway[] = [];
const clients: Client[] = [];
let policyChanged = false;
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  // Closing a gateway stops its stdio upstreams.
  await Promise.all(gateways.splice(0).map((g) => g.close()));
  if (policyChanged) await ann.putPolicy(BASE);
  policyChanged = false;
});
afterAll(async () => {
  await files?.close();
  await server?.stop();
});

async function putPolicy(policy: PolicyDocument): Promise<void> {
  policyChanged = true;
  await ann.putPolicy(policy);
}

/** A live upstream's entry in the gateway's config: its resources and prompts passed through unless `extra` says. */
function live(name: string, up: LiveUpstream, extra: Partial<StdioUpstream> = {}): StdioUpstream {
  return { name, command: up.command, args: up.args, env: up.env, resources: true, prompts: true, ...extra };
}

async function start(
  upstreams: McpGatewayOptions['upstreams'],
  extra: Partial<McpGatewayOptions> = {},
): Promise<{ gateway: TollgateMcpGateway; logs: string[] }> {
  const logs: string[] = [];
  const gateway = await TollgateMcpGateway.start({
    tollgate: new Tollgate({ url: server.url, token: agentToken }),
    upstreams,
    progressIntervalMs: 50,
    log: (level, message) => logs.push(`${level}: ${message}`),
    ...extra,
  });
  gateways.push(gateway);
  return { gateway, logs };
}

/** An MCP client's session, and what the gateway sent it besides answers. */
interface Session {
  client: Client;
  /** The elicitations it was sent, in order. */
  asked: ElicitRequestParams[];
  /** The elicitation ids it was told are complete, in order. */
  completed: string[];
  /** How many `notifications/<kind>/list_changed` it received. */
  changed: { tools: number; resources: number; prompts: number };
  /** How many progress notifications its calls received. */
  progress: number;
}

async function connect(
  gateway: TollgateMcpGateway,
  identity: SessionIdentity = { user: ANN },
  o: {
    elicitation?: { form?: Record<string, never>; url?: Record<string, never> };
    answer?: (params: ElicitRequestParams) => ElicitResult | Promise<ElicitResult>;
  } = {},
): Promise<Session> {
  const client = new Client(
    { name: 'spec-test', version: '1.0.0' },
    { capabilities: o.elicitation ? { elicitation: o.elicitation } : {} },
  );
  const s: Session = { client, asked: [], completed: [], changed: { tools: 0, resources: 0, prompts: 0 }, progress: 0 };
  if (o.elicitation) {
    client.setRequestHandler('elicitation/create', async (request) => {
      s.asked.push(request.params);
      return o.answer ? o.answer(request.params) : { action: 'cancel' };
    });
  }
  client.setNotificationHandler('notifications/elicitation/complete', (n) => {
    s.completed.push(n.params.elicitationId);
  });
  client.setNotificationHandler('notifications/tools/list_changed', () => void (s.changed.tools += 1));
  client.setNotificationHandler('notifications/resources/list_changed', () => void (s.changed.resources += 1));
  client.setNotificationHandler('notifications/prompts/list_changed', () => void (s.changed.prompts += 1));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await gateway.server(identity).connect(serverSide);
  await client.connect(clientSide);
  clients.push(client);
  return s;
}

/** A tool call that counts the progress the gateway sends while it waits. */
function call(s: Session, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return s.client.callTool(
    { name, arguments: args },
    { onprogress: () => void (s.progress += 1) },
  ) as Promise<CallToolResult>;
}

/**
 * Lets the gateway act on what it was just told: three more progress notifications (one every 50 ms) of a waiting
 * call. A barrier, not a time bound: what the gateway does on an answer it does at once, well before.
 */
async function settle(s: Session): Promise<void> {
  const seen = s.progress;
  await until(() => s.progress >= seen + 3, 20_000, 'three more progress notifications');
}

async function pending(toolName: string, match: (args: Record<string, unknown>) => boolean): Promise<Approval> {
  let found: Approval | undefined;
  await until(
    async () => !!(found = (await ann.inbox().all()).find((a) => a.toolName === toolName && match(a.arguments))),
    20_000,
    `a pending ${toolName}`,
  );
  return found!;
}

const names = async (s: Session) => (await s.client.listTools()).tools.map((t) => t.name).sort();
const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
let n = 0;
const unique = (what: string) => `/srv/${what}-${++n}`;

describe('URL-mode elicitation', () => {
  let up: LiveUpstream;
  let gateway: TollgateMcpGateway;
  const INBOX = 'https://inbox.example.test/tollgate/';
  beforeEach(async () => {
    up = await liveUpstream('live');
    // Annotations trusted: move_file is neither read-only nor destructive (a chat may approve it), delete_file is
    // destructive (a chat may not), wire_money asks for a passkey.
    ({ gateway } = await start([live('live', up, { trustAnnotations: true })], { inboxUrl: INBOX }));
  });
  const movesOf = (from: string) => up.received().filter((r) => r.name === 'move_file' && r.arguments.from === from);

  it("sends a client that takes links and no form the call's card; opening it decides nothing, a person's approval in the inbox runs the call and completes the elicitation", async () => {
    const s = await connect(
      gateway,
      { user: ANN, userToken: annToken },
      {
        elicitation: { url: {} },
        answer: () => ({ action: 'accept' }),
      },
    );
    const from = unique('draft');
    const running = call(s, 'move_file', { from, to: '/srv/final' });
    const held = await pending('move_file', (a) => a.from === from);
    await until(() => s.asked.length === 1, 20_000, 'the elicitation');
    expect(s.asked[0]).toEqual({
      mode: 'url',
      elicitationId: expect.stringMatching(/\S/),
      url: `https://inbox.example.test/tollgate/#/calls/${encodeURIComponent(held.id)}`,
      message: `move_file waits for your decision in the Tollgate inbox. Open its card to see the whole call (${held.policy.reason}), then approve, edit or reject it there.`,
    });

    // Accepting only opened the link: the call still waits, nothing ran, nothing is complete.
    await settle(s);
    expect((await ann.getToolCall(held.id)).status).toBe('pending');
    expect(movesOf(from)).toEqual([]);
    expect(s.completed).toEqual([]);

    await ann.inbox().decide(held.id, { decision: 'approve' });
    expect(await running).toEqual({ content: [{ type: 'text', text: `live: moved ${from} to /srv/final` }] });
    await until(() => s.completed.length > 0, 20_000, 'the completion notification');
    expect(s.completed).toEqual([(s.asked[0] as { elicitationId: string }).elicitationId]);
    expect(s.asked).toHaveLength(1);
    expect(movesOf(from)).toHaveLength(1);
    expect((await ann.getToolCall(held.id)).decision).toMatchObject({
      outcome: 'approved',
      by: { id: 'ann', via: 'web' },
    });
  });

  it('sends the card, not the yes/no form, for a destructive tool to a client taking both; a decline rejects nothing and the inbox still decides', async () => {
    const s = await connect(
      gateway,
      { user: ANN, userToken: annToken },
      {
        elicitation: { form: {}, url: {} },
        answer: () => ({ action: 'decline' }),
      },
    );
    const path = unique('old-logs');
    const running = call(s, 'delete_file', { path });
    const held = await pending('delete_file', (a) => a.path === path);
    await until(() => s.asked.length === 1, 20_000, 'the elicitation');
    expect(s.asked[0]).toMatchObject({
      mode: 'url',
      url: `${INBOX}#/calls/${encodeURIComponent(held.id)}`,
      message: expect.stringContaining(
        'delete_file waits for your decision in the Tollgate inbox (it cannot be approved in this chat: the tool is destructive).',
      ),
    });

    // The person's token is at hand, and still the decline rejects nothing.
    await settle(s);
    expect((await ann.getToolCall(held.id)).status).toBe('pending');
    expect(up.received().filter((r) => r.name === 'delete_file')).toEqual([]);

    await ann.inbox().decide(held.id, { decision: 'approve', reason: 'they are old' });
    expect(textOf(await running)).toBe(`live: deleted ${path}`);
    expect(s.asked).toHaveLength(1);
    expect(s.completed).toEqual([]); // never opened: nothing to complete
  });

  it("sends a session without a person's token the card even where the chat could approve; the elicitation completes on a rejection in the inbox too", async () => {
    const s = await connect(
      gateway,
      { user: ANN },
      {
        elicitation: { form: {}, url: {} },
        answer: () => ({ action: 'accept' }),
      },
    );
    const from = unique('no-token');
    const running = call(s, 'move_file', { from, to: '/srv/elsewhere' });
    const held = await pending('move_file', (a) => a.from === from);
    await until(() => s.asked.length === 1, 20_000, 'the elicitation');
    expect(s.asked[0]).toMatchObject({ mode: 'url', url: `${INBOX}#/calls/${encodeURIComponent(held.id)}` });

    await ann.inbox().decide(held.id, { decision: 'reject', reason: 'keep it there' });
    expect(await running).toEqual({
      content: [{ type: 'text', text: 'move_file was rejected by Ann via web: keep it there. The call did not run.' }],
      isError: true,
    });
    await until(() => s.completed.length > 0, 20_000, 'the completion notification');
    expect(s.completed).toEqual([(s.asked[0] as { elicitationId: string }).elicitationId]);
    expect(movesOf(from)).toEqual([]);
  });

  it.each([
    ['forms only', { form: {} }],
    ['forms and links', { form: {}, url: {} }],
  ])(
    'asks a client taking %s, as before, with a yes/no form where the chat may approve: its yes runs the call, via mcp',
    async (_, elicitation) => {
      const s = await connect(
        gateway,
        { user: ANN, userToken: annToken },
        { elicitation, answer: () => ({ action: 'accept', content: { approve: true, reason: 'fine' } }) },
      );
      const from = unique('form');
      const result = await call(s, 'move_file', { from, to: '/srv/formed' });
      expect(textOf(result)).toBe(`live: moved ${from} to /srv/formed`);
      expect(s.asked).toHaveLength(1);
      const form = s.asked[0] as ElicitRequestFormParams;
      expect(form.mode ?? 'form').toBe('form');
      expect(form.message).toMatch(/^Allow move_file with \{.*\}\? \(/);
      expect(Object.keys(form.requestedSchema.properties).sort()).toEqual(['approve', 'reason']);
      const approved = (await ann.listAuditEvents({ toolName: 'move_file', type: 'ToolCallApproved' })).events;
      expect(approved.at(-1)?.data).toMatchObject({ via: 'mcp', approvedBy: 'ann', reason: 'fine' });
      expect(movesOf(from)).toHaveLength(1);
      expect(s.completed).toEqual([]);
    },
  );

  it('asks a client with forms only, for a call the chat may not approve, with a form that only rejects and links to the card', async () => {
    const s = await connect(
      gateway,
      { user: { token: annIdToken }, userToken: annToken },
      {
        elicitation: { form: {} },
        answer: () => ({ action: 'accept', content: { decision: 'reject', reason: 'not now' } }),
      },
    );
    const result = await call(s, 'wire_money', { to: 'ACME', amount: '10' });
    expect(result).toEqual({
      content: [{ type: 'text', text: 'wire_money was rejected by Ann via mcp: not now. The call did not run.' }],
      isError: true,
    });
    expect(s.asked).toHaveLength(1);
    const form = s.asked[0] as ElicitRequestFormParams;
    expect(form.mode ?? 'form').toBe('form');
    expect(form.message).toContain(`${INBOX}#/calls/`);
    expect(form.message).toContain(
      '(it cannot be approved in this chat: it needs a passkey, which signs for it in the inbox)',
    );
    expect(form.requestedSchema.properties.decision).toMatchObject({
      oneOf: [{ const: 'wait' }, { const: 'reject' }],
    });
    expect(up.received().filter((r) => r.name === 'wire_money')).toEqual([]);
  });

  it("sends a call that needs a passkey to its card, not to the form, when the client takes both; the person's passkey approval in the inbox runs it and completes the elicitation", async () => {
    const s = await connect(
      gateway,
      { user: { token: annIdToken }, userToken: annToken },
      {
        elicitation: { form: {}, url: {} },
        answer: () => ({ action: 'accept' }),
      },
    );
    const to = `ACME-${++n}`;
    const running = call(s, 'wire_money', { to, amount: '950' });
    const held = await pending('wire_money', (a) => a.to === to);
    await until(() => s.asked.length === 1, 20_000, 'the elicitation');
    expect(s.asked[0]).toMatchObject({
      mode: 'url',
      url: `${INBOX}#/calls/${encodeURIComponent(held.id)}`,
      message: expect.stringContaining(
        '(it cannot be approved in this chat: it needs a passkey, which signs for it in the inbox)',
      ),
    });
    expect(s.completed).toEqual([]);

    const options = await ann.inbox().stepUp(held.id);
    await ann.inbox().approve(held.id, { stepUp: { passkey: annKey.assert(options.publicKey) } });
    expect(textOf(await running)).toBe(`live: wired 950 to ${to}`);
    await until(() => s.completed.length > 0, 20_000, 'the completion notification');
    expect(s.completed).toEqual([(s.asked[0] as { elicitationId: string }).elicitationId]);
    expect(s.asked).toHaveLength(1);
    expect((await ann.getToolCall(held.id)).decision).toMatchObject({ stepUp: { method: 'passkey' } });
  });

  it("asks nothing in the chat for a call that needs a passkey when Tollgate did not verify the session's user: the requester is no approver of it, the inbox decides", async () => {
    const s = await connect(
      gateway,
      { user: ANN, userToken: annToken },
      { elicitation: { form: {}, url: {} }, answer: () => ({ action: 'accept' }) },
    );
    const to = `ACME-${++n}`;
    const running = call(s, 'wire_money', { to, amount: '5' });
    const held = await pending('wire_money', (a) => a.to === to);
    expect(held.approval?.approvers).toEqual(['admin']);
    await settle(s);
    expect(s.asked).toEqual([]);
    await ann.inbox().decide(held.id, { decision: 'reject', reason: 'not without a passkey' });
    expect(textOf(await running)).toBe(
      'wire_money was rejected by Ann via web: not without a passkey. The call did not run.',
    );
    expect(s.asked).toEqual([]);
  });
  it('tells a client that cancelled its tool call nothing more of the elicitation; the call, left pending, never runs', async () => {
    const s = await connect(
      gateway,
      { user: ANN, userToken: annToken },
      { elicitation: { url: {} }, answer: () => ({ action: 'accept' }) },
    );
    const from = unique('cancelled');
    const abort = new AbortController();
    const running = s.client.callTool(
      { name: 'move_file', arguments: { from, to: '/srv/never' } },
      { signal: abort.signal },
    );
    const held = await pending('move_file', (a) => a.from === from);
    await until(() => s.asked.length === 1, 20_000, 'the elicitation');
    abort.abort();
    await expect(running).rejects.toThrow();

    // The call stays pending in Tollgate and holds the conversation's next step (docs/integrations/mcp.md): once
    // it is decided, the session's next call is proposed and runs. By then the gateway was long done with the first.
    await ann.inbox().decide(held.id, { decision: 'approve' });
    expect(textOf(await call(s, 'grow', { name: 'after_cancel' }))).toBe('live: grew after_cancel');
    expect(s.completed).toEqual([]);
    expect(movesOf(from)).toEqual([]);
  });
});

describe('tools the policy denies outright', () => {
  const deny = { match: 'delete_*', level: 'deny' as const, reason: 'nothing is deleted here' };

  it('are left out of tools/list; called by name anyway, they are proposed, denied and never reach the upstream', async () => {
    await putPolicy(withRules(deny));
    const up = await liveUpstream('live');
    const { gateway } = await start([live('live', up)]);
    expect(gateway.tools.map((t) => t.name)).toContain('delete_file');
    const s = await connect(gateway);
    expect(await names(s)).toEqual(['add_note', 'add_prompt', 'grow', 'move_file', 'shrink', 'wire_money']);

    const path = unique('denied');
    const result = await call(s, 'delete_file', { path });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^delete_file was denied by the policy/);
    expect(up.received().filter((r) => r.name === 'delete_file')).toEqual([]);
    const proposed = (await ann.listAuditEvents({ toolName: 'delete_file', type: 'ToolCallProposed' })).events.filter(
      (e) => (e.data as { arguments?: { path?: string } }).arguments?.path === path,
    );
    expect(proposed).toHaveLength(1);
  });

  it('are listed with hideDeniedTools: false, and denied all the same', async () => {
    await putPolicy(withRules(deny));
    const up = await liveUpstream('live');
    const { gateway } = await start([live('live', up)], { hideDeniedTools: false });
    const s = await connect(gateway);
    expect(await names(s)).toContain('delete_file');
    const result = await call(s, 'delete_file', { path: unique('listed') });
    expect(textOf(result)).toMatch(/^delete_file was denied by the policy/);
    expect(up.received().filter((r) => r.name === 'delete_file')).toEqual([]);
  });

  it('do not include tools a deny rule names with an argument list or a condition: such a rule may not match a call', async () => {
    await putPolicy(
      withRules(
        { match: 'delete_file(path=/etc/*)', level: 'deny' },
        { match: 'move_file', level: 'deny', when: { confidenceBelow: 0.5 } },
      ),
    );
    const up = await liveUpstream('live');
    const { gateway } = await start([live('live', up)]);
    const s = await connect(gateway);
    expect(await names(s)).toEqual([
      'add_note',
      'add_prompt',
      'delete_file',
      'grow',
      'move_file',
      'shrink',
      'wire_money',
    ]);
  });

  it('include a tool an upstream adds later: it is never listed to a client, and a call to it is denied', async () => {
    await putPolicy(withRules({ match: 'secret_*', level: 'deny' }));
    const up = await liveUpstream('live');
    const { gateway } = await start([live('live', up)]);
    const s = await connect(gateway);
    const watcher = await connect(gateway);
    // A client listing over and over while the tool arrives: no listing may show it.
    const seen = new Set<string>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        for (const name of await names(watcher)) seen.add(name);
        await new Promise((resolve) => setImmediate(resolve)); // in memory, a listing never leaves the microtasks
      }
    })();
    try {
      expect(textOf(await call(s, 'grow', { name: 'secret_plan' }))).toBe('live: grew secret_plan');
      await until(() => gateway.tools.some((t) => t.name === 'secret_plan'), 20_000, 'secret_plan taken');
      // What clients are served did not change, so they are not told; the next change that shows is told once.
      expect(textOf(await call(s, 'grow', { name: 'open_plan' }))).toBe('live: grew open_plan');
      await until(() => s.changed.tools >= 1, 20_000, 'tools/list_changed');
      expect(s.changed.tools).toBe(1);
    } finally {
      watching = false;
      await watch;
    }
    expect(await names(s)).not.toContain('secret_plan');
    const result = await call(s, 'secret_plan', { path: '/plans' });
    expect(textOf(result)).toMatch(/^secret_plan was denied by the policy/);
    expect(up.received().filter((r) => r.name === 'secret_plan')).toEqual([]);
    expect(seen.has('grow')).toBe(true); // the watcher did list
    expect(seen.has('secret_plan')).toBe(false);
  });

  it('follow the policy as it changes: a deny rule put later removes the tool and tells the client; the rule gone, it is back', async () => {
    const up = await liveUpstream('live');
    const { gateway } = await start([live('live', up)], { policyRefreshMs: 200 });
    const s = await connect(gateway);
    const other = await connect(gateway);
    expect(await names(s)).toContain('delete_file');

    await putPolicy(withRules({ match: 'delete_file', level: 'deny' }));
    await until(() => s.changed.tools >= 1 && other.changed.tools >= 1, 20_000, 'tools/list_changed to both sessions');
    expect(await names(s)).not.toContain('delete_file');
    expect(await names(s)).toContain('move_file');

    await ann.putPolicy(BASE);
    await until(() => s.changed.tools >= 2, 20_000, 'a second tools/list_changed');
    expect(await names(s)).toContain('delete_file');
  });
});

describe("an upstream's changed tool list", () => {
  it('is followed: a new tool is registered as destructive (annotations untrusted), every session is told, and a call to it goes through Tollgate; a removed tool is gone', async () => {
    const up = await liveUpstream('live');
    const { gateway, logs } = await start([live('live', up)]);
    const s = await connect(gateway);
    const other = await connect(gateway);
    expect(await names(other)).not.toContain('fetch_report');

    expect(textOf(await call(s, 'grow', { name: 'fetch_report', readOnly: true }))).toBe('live: grew fetch_report');
    await until(() => s.changed.tools >= 1 && other.changed.tools >= 1, 20_000, 'tools/list_changed to both sessions');
    const listed = (await other.client.listTools()).tools.find((t) => t.name === 'fetch_report');
    expect(listed).toMatchObject({ description: 'Grown at runtime (live)', annotations: { readOnlyHint: true } });
    expect(await ann.getTool('fetch_report')).toMatchObject({
      isReadOnly: false,
      destructive: true,
      registeredBy: { id: 'mcp-gateway', kind: 'agent' },
      description: 'The MCP server live says: "Grown at runtime (live)"',
    });
    expect(logs).toContain("info: the upstreams' tools changed: new fetch_report");

    // Untrusted, its readOnlyHint counts for nothing: the call waits for a person.
    const path = unique('report');
    const running = call(other, 'fetch_report', { path });
    const held = await pending('fetch_report', (a) => a.path === path);
    expect(held.policy.toolFlags).toMatchObject({ destructive: true });
    expect(up.received().filter((r) => r.name === 'fetch_report')).toEqual([]);
    await ann.inbox().approve(held.id);
    expect(textOf(await running)).toBe(`live: fetch_report ran on ${path}`);

    expect(textOf(await call(s, 'shrink', { name: 'fetch_report' }))).toBe('live: shrank fetch_report');
    await until(() => s.changed.tools >= 2 && other.changed.tools >= 2, 20_000, 'a second tools/list_changed');
    expect(await names(other)).not.toContain('fetch_report');
    await expect(call(other, 'fetch_report', { path })).rejects.toThrow(/Unknown tool: fetch_report/);
    expect(logs).toContain("info: the upstreams' tools changed: gone fetch_report");
  });

  it('registers a new tool of a trusted upstream with its annotations: a read-only one runs at once', async () => {
    const up = await liveUpstream('live');
    const { gateway } = await start([live('live', up, { trustAnnotations: true })]);
    const s = await connect(gateway);
    await call(s, 'grow', { name: 'lookup_index', readOnly: true });
    await until(() => s.changed.tools >= 1, 20_000, 'tools/list_changed');
    expect(await ann.getTool('lookup_index')).toMatchObject({ isReadOnly: true, destructive: false });
    expect(await call(s, 'lookup_index', { path: '/idx' })).toEqual({
      content: [{ type: 'text', text: 'live: lookup_index ran on /idx' }],
    });
  });

  it("is refused when a new tool would take another upstream's tool name: the list before stays, an error is logged; once the tool is gone, changes are followed again", async () => {
    const up = await liveUpstream('live');
    const { gateway, logs } = await start([
      live('live', up),
      { name: 'files', url: files.url, trustAnnotations: true },
    ]);
    const s = await connect(gateway);
    const before = await names(s);
    expect(before).toContain('read_file');

    expect(textOf(await call(s, 'grow', { name: 'read_file' }))).toBe('live: grew read_file');
    await until(() => logs.some((l) => l.startsWith('error: ')), 20_000, 'the error logged');
    expect(logs.filter((l) => l.startsWith('error: '))).toEqual([
      expect.stringMatching(
        /^error: the upstreams' new tool list is not taken, the one before stays: two tools would be called read_file: /,
      ),
    ]);
    expect(await names(s)).toEqual(before);
    expect(s.changed.tools).toBe(0);
    // read_file is still the files server's.
    const path = unique('kept');
    expect(await call(s, 'read_file', { path })).toEqual({
      content: [{ type: 'text', text: `files: read_file ran on ${path}` }],
    });
    expect(up.received().filter((r) => r.name === 'read_file')).toEqual([]);

    // Without read_file, live's list is taken again: a later tool of its own is followed.
    await call(s, 'shrink', { name: 'read_file' });
    await call(s, 'grow', { name: 'summarize_logs' });
    // Told once the new tool is registered (a listing may see it a moment sooner).
    await until(() => s.changed.tools >= 1, 20_000, 'tools/list_changed');
    expect(await names(s)).toEqual([...before, 'summarize_logs'].sort());
  });

  it("refused for one upstream, does not stop another upstream's new tools from being followed", async () => {
    const [alpha, beta] = await Promise.all([liveUpstream('alpha'), liveUpstream('beta')]);
    const { gateway, logs } = await start([
      live('alpha', alpha),
      live('beta', beta, { namespace: true }),
      { name: 'files', url: files.url, trustAnnotations: true },
    ]);
    const s = await connect(gateway);
    await call(s, 'grow', { name: 'read_file' }); // alpha's: would take files' read_file
    await until(() => logs.some((l) => l.startsWith('error: ')), 20_000, 'the error logged');

    await call(s, 'beta__grow', { name: 'audit_trail' });
    await until(
      () => s.changed.tools >= 1 || logs.filter((l) => l.startsWith('error: ')).length > 1,
      20_000,
      "beta's change taken or refused",
    );
    expect(await names(s)).toContain('beta__audit_trail');
  });

  it("warns of a policy rule written for a new tool's own name that misses the name Tollgate sees, as at start", async () => {
    await putPolicy(withRules({ match: 'report', level: 'deny' }));
    const up = await liveUpstream('beta');
    const { gateway, logs } = await start([live('beta', up, { namespace: true })]);
    const s = await connect(gateway);
    await call(s, 'beta__grow', { name: 'report' });
    // Warned once the new list is registered (the tool is listed a moment sooner).
    await until(() => logs.some((l) => l.includes('as beta__report')), 20_000, 'the warning');
    expect(logs).toContain(
      'warn: policy rule "report" (deny) matches "report" of upstream beta, but Tollgate sees that tool as beta__report: the rule does not apply to it',
    );
    expect(await names(s)).toContain('beta__report'); // the rule does not apply: not hidden
  });

  it("refuses a new tool named like another upstream's namespaced tools (<upstream>__<name>): it would pass for that server's", async () => {
    const [alpha, beta] = await Promise.all([liveUpstream('alpha'), liveUpstream('beta')]);
    const { gateway, logs } = await start([live('alpha', alpha), live('beta', beta, { namespace: true })]);
    const s = await connect(gateway);
    const before = await names(s);
    await call(s, 'grow', { name: 'beta__wipe' });
    await until(() => logs.some((l) => l.startsWith('error: ')), 20_000, 'the error logged');
    expect(logs.filter((l) => l.startsWith('error: '))).toEqual([
      expect.stringMatching(/would be called beta__wipe, which reads as a tool of upstream beta/),
    ]);
    expect(await names(s)).toEqual(before);
    expect(s.changed.tools).toBe(0);
  });
});

describe('resources and prompts', () => {
  it('are off unless the upstream opts in: without resources: true and prompts: true, neither capability is declared', async () => {
    const up = await liveUpstream('live');
    const { gateway } = await start([live('live', up, { resources: undefined, prompts: undefined })]);
    const s = await connect(gateway);
    const capabilities = s.client.getServerCapabilities();
    expect(capabilities?.resources).toBeUndefined();
    expect(capabilities?.prompts).toBeUndefined();
    await expect(s.client.readResource({ uri: 'live://live/config' })).rejects.toThrow(/not found|Method not found/i);
  });

  it("pass through: the upstreams' resources with their URIs, reads by URI or by template from the upstream that offers it, an unknown URI not found; nothing is proposed to Tollgate", async () => {
    const passAgent = await mint('mcp-passthrough', ['agent'], 'Pass-through gateway');
    const [alpha, beta] = await Promise.all([liveUpstream('alpha'), liveUpstream('beta')]);
    const gateway = await TollgateMcpGateway.start({
      tollgate: new Tollgate({ url: server.url, token: passAgent }),
      upstreams: [live('alpha', alpha, { namespace: true }), live('beta', beta, { namespace: true })],
    });
    gateways.push(gateway);
    const s = await connect(gateway);
    expect(s.client.getServerCapabilities()).toMatchObject({
      tools: { listChanged: true },
      resources: { listChanged: true },
      prompts: { listChanged: true },
    });

    const { resources } = await s.client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(['live://alpha/config', 'live://beta/config']);
    expect(resources.find((r) => r.uri === 'live://beta/config')).toMatchObject({
      name: 'config',
      title: 'The beta config',
      mimeType: 'text/plain',
    });
    expect(await s.client.readResource({ uri: 'live://beta/config' })).toEqual({
      contents: [{ uri: 'live://beta/config', mimeType: 'text/plain', text: 'beta config' }],
    });

    const { resourceTemplates } = await s.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual([
      'live://alpha/items/{id}',
      'live://beta/items/{id}',
    ]);
    expect(await s.client.readResource({ uri: 'live://beta/items/7' })).toEqual({
      contents: [{ uri: 'live://beta/items/7', mimeType: 'text/plain', text: 'beta item 7' }],
    });
    expect(beta.received()).toEqual([
      { server: 'beta', kind: 'resource', name: 'live://beta/config', arguments: {} },
      { server: 'beta', kind: 'resource', name: 'live://beta/items/7', arguments: { id: '7' } },
    ]);
    expect(alpha.received()).toEqual([]);

    const missing = await s.client.readResource({ uri: 'live://gamma/config' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(missing).toBeInstanceOf(ResourceNotFoundError);
    expect((missing as ResourceNotFoundError).uri).toBe('live://gamma/config');

    // Prompts too (namespaced like the tools), and none of it was a tool call.
    expect((await s.client.getPrompt({ name: 'alpha__greet', arguments: { name: 'Ann' } })).messages).toHaveLength(1);
    const proposed = async () =>
      (await ann.listAuditEvents({ actor: 'mcp-passthrough', type: 'ToolCallProposed' })).events.length;
    expect(await proposed()).toBe(0);
    // The same query sees a tool call of this gateway's.
    await call(s, 'alpha__add_note', { name: 'x', text: 'y' });
    expect(await proposed()).toBe(1);
  });

  // The MCP SDK answers resource-not-found as the 2026-07-28 revision asks (-32602 with the URI in data), which
  // the 2025 revisions' clients are told to accept beside -32002.
  it('answers an unknown URI with resource not found: -32602 naming the URI', async () => {
    const up = await liveUpstream('live');
    const { gateway } = await start([live('live', up)]);
    const s = await connect(gateway);
    const missing = await s.client.readResource({ uri: 'live://live/nothing' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(missing).toBeInstanceOf(ProtocolError);
    expect((missing as ProtocolError).code).toBe(-32602);
    expect((missing as ProtocolError).data).toEqual({ uri: 'live://live/nothing' });
  });

  it("pass prompts through under the names tools get (<upstream>__<name> for a namespaced upstream), with the upstream's messages; an unknown prompt is an error", async () => {
    const [alpha, beta] = await Promise.all([liveUpstream('alpha'), liveUpstream('beta')]);
    const { gateway } = await start([live('alpha', alpha), live('beta', beta, { namespace: true })]);
    const s = await connect(gateway);
    expect((await s.client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(['beta__greet', 'greet']);
    expect((await s.client.listPrompts()).prompts.find((p) => p.name === 'beta__greet')).toMatchObject({
      description: 'Greets someone (beta)',
      arguments: [{ name: 'name', required: true }],
    });

    expect(await s.client.getPrompt({ name: 'beta__greet', arguments: { name: 'Ann' } })).toEqual({
      description: 'A greeting from beta',
      messages: [{ role: 'user', content: { type: 'text', text: 'Hello, Ann, from beta' } }],
    });
    expect((await s.client.getPrompt({ name: 'greet', arguments: { name: 'Bea' } })).messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Hello, Bea, from alpha' } },
    ]);
    expect(beta.received()).toEqual([{ server: 'beta', kind: 'prompt', name: 'greet', arguments: { name: 'Ann' } }]);

    for (const name of ['gamma__greet', 'alpha__greet']) {
      const refused = await s.client.getPrompt({ name, arguments: { name: 'Ann' } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).message).toContain(`Unknown prompt: ${name}`);
    }
  });

  it('are hidden per upstream with resources: false and prompts: false; turned off everywhere, the capabilities are not declared', async () => {
    const only = await liveUpstream('only');
    const { gateway: bare } = await start([live('only', only, { resources: false, prompts: false })]);
    const plain = await connect(bare);
    const caps = plain.client.getServerCapabilities()!;
    expect(caps.tools).toEqual({ listChanged: true });
    expect(caps.resources).toBeUndefined();
    expect(caps.prompts).toBeUndefined();
    await expect(plain.client.request({ method: 'resources/list', params: {} })).rejects.toThrow(/not found/i);
    await expect(plain.client.request({ method: 'prompts/list', params: {} })).rejects.toThrow(/not found/i);

    const [alpha, beta] = await Promise.all([liveUpstream('alpha'), liveUpstream('beta')]);
    const { gateway } = await start([
      live('alpha', alpha, { namespace: true, resources: false }),
      live('beta', beta, { namespace: true, prompts: false }),
    ]);
    const s = await connect(gateway);
    expect((await s.client.listResources()).resources.map((r) => r.uri)).toEqual(['live://beta/config']);
    expect((await s.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      'live://beta/items/{id}',
    ]);
    expect((await s.client.listPrompts()).prompts.map((p) => p.name)).toEqual(['alpha__greet']);
    await expect(s.client.readResource({ uri: 'live://alpha/config' })).rejects.toBeInstanceOf(ResourceNotFoundError);
    await expect(s.client.readResource({ uri: 'live://alpha/items/1' })).rejects.toBeInstanceOf(ResourceNotFoundError);
    await expect(s.client.getPrompt({ name: 'beta__greet', arguments: { name: 'Ann' } })).rejects.toThrow(
      /Unknown prompt: beta__greet/,
    );
    expect(alpha.received().filter((r) => r.kind !== 'tool')).toEqual([]);
    expect(beta.received().filter((r) => r.kind !== 'tool')).toEqual([]);

    // alpha says its resources changed, then its prompts: only the prompts' change reaches the client.
    await call(s, 'alpha__add_note', { name: 'hidden', text: 'not for clients' });
    await call(s, 'alpha__add_prompt', { name: 'shown' });
    await until(() => s.changed.prompts >= 1, 20_000, 'prompts/list_changed');
    expect(s.changed.resources).toBe(0);
    expect((await s.client.listResources()).resources.map((r) => r.uri)).toEqual(['live://beta/config']);
  });

  it("tell the client when an upstream's resources or prompts change, and the new ones are there", async () => {
    const up = await liveUpstream('live');
    const { gateway } = await start([live('live', up)]);
    const s = await connect(gateway);
    const other = await connect(gateway);

    await call(s, 'add_note', { name: 'todo', text: 'buy milk' });
    await until(() => s.changed.resources >= 1 && other.changed.resources >= 1, 20_000, 'resources/list_changed');
    expect((await other.client.listResources()).resources.map((r) => r.uri).sort()).toEqual([
      'live://live/config',
      'live://live/notes/todo',
    ]);
    expect(await other.client.readResource({ uri: 'live://live/notes/todo' })).toEqual({
      contents: [{ uri: 'live://live/notes/todo', mimeType: 'text/plain', text: 'buy milk' }],
    });

    await call(s, 'add_prompt', { name: 'standup' });
    await until(() => s.changed.prompts >= 1 && other.changed.prompts >= 1, 20_000, 'prompts/list_changed');
    expect((await other.client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(['greet', 'standup']);
    expect((await other.client.getPrompt({ name: 'standup' })).messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'live: standup' } },
    ]);
  });
});
