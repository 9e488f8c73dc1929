/**
 * The MCP gateway and calls whose rule asks for a passkey (`stepUp: passkey`): a chat client cannot sign with the
 * person's passkey, so the elicitation form offers no Approve, only Reject (or leave it for the inbox), and links to
 * the call's card; the gateway goes on waiting for the decision made in the inbox. The client here accepts every
 * form unseen, as the review's reproduction did.
 */
import { Client } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { Tollgate } from '../../packages/sdk/src/index.js';
import { TollgateMcpGateway } from '../../packages/sdk/src/integrations/mcp.js';
import { chatMayNotApprove } from '../../packages/sdk/src/integrations/mcp/chat.js';
import { client as http } from '../support/http';
import { autoAccept, chatSession, type Answer, type Form } from '../support/mcp-chat';
import { stdioUpstream, type StdioUpstream } from '../support/mcp-upstream';
import { startTestServer, type TestServer } from '../support/server';
import { SoftAuthenticator } from '../support/soft-authenticator';
import { until } from '../support/wait';

let server: TestServer;
let api: ReturnType<typeof http>;
let files: StdioUpstream;
let gateway: TollgateMcpGateway;
let annToken: string;
let carolToken: string;
const INBOX = 'https://tollgate.example.com';
const CAROL = { id: 'carol', name: 'Carol', roles: ['approver'] };

beforeAll(async () => {
  server = await startTestServer();
  api = http(server.url);
  annToken = await server.token('ann', ['admin'], { name: 'Ann' });
  carolToken = await server.token('carol', ['approver'], { name: 'Carol' });
  const agentToken = await server.token('mcp-gateway', ['agent']);
  // The requester may decide these calls; moving a file needs a passkey on each approval, and then the requester
  // decides only if Tollgate verified them (the gateway names its user unverified): an admin decides it.
  const put = await api.put('/v1/policy', annToken, {
    rules: [
      { match: 'files__move_file', level: 'confirm', approvers: ['requester', 'admin'], stepUp: 'passkey' },
      { match: 'files__*_file', level: 'confirm', approvers: ['requester', 'admin'] },
    ],
  });
  expect(put.status).toBe(200);
  files = await stdioUpstream('files');
  gateway = await TollgateMcpGateway.start({
    tollgate: new Tollgate({ url: server.url, token: agentToken }),
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
    inboxUrl: INBOX,
    progressIntervalMs: 100,
    log: () => undefined,
  });
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await server?.stop();
});

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

/** Carol's chat session (her own token at hand), with a client that answers every form with `answer`. */
async function carolsChat(answer: (form: Form) => Answer) {
  const progress: string[] = [];
  const { client, forms } = await chatSession(gateway, { user: CAROL, userToken: carolToken }, answer);
  clients.push(client);
  const call = (args: Record<string, unknown>) =>
    client.callTool(
      { name: 'files__move_file', arguments: args },
      {
        onprogress: (p) => progress.push(p.message ?? ''),
        resetTimeoutOnProgress: true,
      },
    ) as Promise<CallToolResult>;
  return { call, forms, progress };
}

async function pendingCall(from: string): Promise<{ id: string }> {
  let found: { id: string } | undefined;
  await until(
    async () => {
      const r = await api.get('/v1/approvals', annToken);
      found = r.body.items.find((a: { arguments: Record<string, unknown> }) => a.arguments.from === from);
      return !!found;
    },
    20_000,
    `a pending move of ${from}`,
  );
  return found!;
}

const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
const decide = (id: string, token: string, channel: string, body: Record<string, unknown>) =>
  api.post(`/v1/tool-calls/${id}/decision`, token, body, { 'x-tollgate-channel': channel });

describe('chat approvals and calls that need a passkey', () => {
  it('asks nothing in the chat (the unverified requester may not decide it), links to the card, waits for the inbox', async () => {
    const { call, forms, progress } = await carolsChat(autoAccept);
    const moving = call({ from: '/pk/a', to: '/pk/b' });
    const { id } = await pendingCall('/pk/a');
    const held = (await api.get(`/v1/tool-calls/${id}`, annToken)).body;
    expect(held.approval).toMatchObject({ approvers: ['admin'], stepUp: 'passkey' });
    expect(held.policy.reason).toContain('requester not among the approvers');
    await until(
      () => progress.some((p) => p.includes(`${INBOX}/#/calls/${id}`)),
      20_000,
      'the progress linking the card',
    );
    // Neither approve nor reject comes from the chat: Carol is not among its approvers.
    const relayed = await decide(id, carolToken, 'mcp', { decision: 'reject' });
    expect(relayed.status).toBe(403);
    expect((await decide(id, carolToken, 'mcp', { decision: 'approve' })).status).toBe(403);
    // Decided in the inbox (a rejection: it needs no passkey), the waiting call ends with it.
    expect((await decide(id, annToken, 'web', { decision: 'reject', reason: 'wrong folder' })).status).toBe(200);
    const result = await moving;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('rejected by Ann via web: wrong folder');
    expect(forms).toEqual([]);
  });

  it('the gateway waits until a person approves it in the inbox with their passkey, then the call runs', async () => {
    // Ann's passkey, at the relying party a server without TOLLGATE_PUBLIC_URL has: localhost and its port.
    const annKey = new SoftAuthenticator(`http://localhost:${new URL(server.url).port}`);
    const options = await api.post('/v1/me/passkeys/options', annToken);
    expect(
      (await api.post('/v1/me/passkeys', annToken, { response: annKey.register(options.body.publicKey) })).status,
    ).toBe(201);

    const { call, forms } = await carolsChat(autoAccept);
    const moving = call({ from: '/pk/e', to: '/pk/f' });
    const { id } = await pendingCall('/pk/e');
    const challenge = await api.post(`/v1/tool-calls/${id}/step-up`, annToken, {});
    expect(challenge.status).toBe(200);
    const approved = await decide(id, annToken, 'web', {
      decision: 'approve',
      stepUp: { passkey: annKey.assert(challenge.body.publicKey) },
    });
    expect(approved.status).toBe(200);
    expect(textOf(await moving)).toBe('files: moved /pk/e to /pk/f');
    expect(forms).toEqual([]);
  });

  it("says so from the call's view", () => {
    const call = {
      policy: { level: 'confirm', reason: 'rule 0', rule: 0, policyVersion: 1 },
      approval: { approvers: ['requester'], expiresAt: '2026-01-01T00:00:00.000Z', stepUp: 'passkey' },
    };
    expect(chatMayNotApprove(call as never)).toBe('it needs a passkey, which signs for it in the inbox');
    expect(chatMayNotApprove({ ...call, approval: { ...call.approval, stepUp: undefined } } as never)).toBeUndefined();
  });
});
