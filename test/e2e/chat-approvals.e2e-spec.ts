/**
 * Chat approvals through the MCP gateway, with an MCP client that accepts every form it is shown without a person
 * looking (the review's reproduction: such a client approved a held `delete_file` as the person). A chat answer
 * approves only what its rule takes from a chat, never on arguments it could not show whole; what it may not
 * approve waits in the inbox, and the form links to the call's card.
 */
import { Client } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { Tollgate } from '../../packages/sdk/src/index.js';
import { TollgateMcpGateway } from '../../packages/sdk/src/integrations/mcp.js';
import { client as http } from '../support/http';
import { autoAccept, chatSession, type Answer, type Form } from '../support/mcp-chat';
import { stdioUpstream, type StdioUpstream } from '../support/mcp-upstream';
import { startTestServer, type TestServer } from '../support/server';
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
  // The requester may decide every call of these tools; only the rules say whether the chat may approve them.
  const put = await api.put('/v1/policy', annToken, {
    rules: [
      {
        match: 'files__move_file(from=/nochat/*)',
        level: 'confirm',
        approvers: ['requester', 'admin'],
        allowChatApproval: false,
      },
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

/** Carol's chat session (stdio: her own token at hand), with a client that answers every form with `answer`. */
async function carolsChat(answer: (form: Form) => Answer) {
  const { client, forms } = await chatSession(gateway, { user: CAROL, userToken: carolToken }, answer);
  clients.push(client);
  return { client, forms };
}

async function pendingCall(toolName: string, match: (a: Record<string, unknown>) => boolean): Promise<{ id: string }> {
  let found: { id: string } | undefined;
  await until(
    async () => {
      const r = await api.get('/v1/approvals', annToken);
      found = r.body.items.find(
        (a: { toolName: string; arguments: Record<string, unknown> }) => a.toolName === toolName && match(a.arguments),
      );
      return !!found;
    },
    20_000,
    `a pending ${toolName}`,
  );
  return found!;
}

const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
const decide = (id: string, token: string, channel: string, body: Record<string, unknown>) =>
  api.post(`/v1/tool-calls/${id}/decision`, token, body, { 'x-tollgate-channel': channel });

describe('chat approvals', () => {
  it('an auto-accepting client cannot approve a held destructive call: the form offers no Approve, links to the card, and the call waits for the inbox', async () => {
    const { client, forms } = await carolsChat(autoAccept);
    const deleting = client.callTool({ name: 'files__delete_file', arguments: { path: '/chat/a' } });
    const call = await pendingCall('files__delete_file', (a) => a.path === '/chat/a');
    await until(() => forms.length > 0, 20_000, 'the form in the chat');
    expect(Object.keys(forms[0].requestedSchema!.properties)).not.toContain('approve');
    expect(forms[0].message).toContain(
      `waits for a person's approval in the Tollgate inbox: ${INBOX}/#/calls/${call.id}`,
    );
    expect(forms[0].message).toContain('cannot be approved in this chat: the tool is destructive');

    // Tollgate itself refuses the approval when a client relays it, whatever gateway it came through.
    const relayed = await decide(call.id, carolToken, 'mcp', { decision: 'approve' });
    expect(relayed.status).toBe(403);
    expect(relayed.body).toMatchObject({ code: 'chat_approval_not_allowed', card: `/#/calls/${call.id}` });
    expect(relayed.body.detail).toContain(`/#/calls/${call.id}`);
    const refused = await api.get('/v1/audit/events?toolName=files__delete_file&type=DecisionRefused', annToken);
    expect(refused.body.events.at(-1)).toMatchObject({
      actor: { id: 'carol', via: 'mcp' },
      data: { code: 'chat_approval_not_allowed', refusedBy: 'carol' },
    });

    // Still pending: a person approves it in the inbox, and only then it runs.
    expect((await decide(call.id, annToken, 'web', { decision: 'approve' })).status).toBe(200);
    expect(textOf((await deleting) as CallToolResult)).toBe('files: deleted /chat/a');
    const approved = await api.get('/v1/audit/events?toolName=files__delete_file&type=ToolCallApproved', annToken);
    expect(approved.body.events.at(-1)).toMatchObject({
      actor: { id: 'ann', via: 'web' },
      data: { approvedBy: 'ann' },
    });
  });

  it('never offers Approve on arguments too long to show whole: it says how long they are and links to the card', async () => {
    const { client, forms } = await carolsChat(autoAccept);
    // The agent pads the arguments so that what matters falls past what a form shows.
    const from = `/chat/${'x'.repeat(2500)}/then/the/real/path`;
    const moving = client.callTool({ name: 'files__move_file', arguments: { from, to: '/chat/b' } });
    const call = await pendingCall('files__move_file', (a) => a.from === from);
    await until(() => forms.length > 0, 20_000, 'the form in the chat');
    const length = JSON.stringify({ from, to: '/chat/b' }).length;
    expect(Object.keys(forms[0].requestedSchema!.properties)).not.toContain('approve');
    expect(forms[0].message).toContain(`arguments too long to show here: ${length} characters`);
    expect(forms[0].message).toContain(`${INBOX}/#/calls/${call.id}`);
    expect(forms[0].message).not.toContain('then/the/real/path');
    expect((await decide(call.id, annToken, 'web', { decision: 'approve' })).status).toBe(200);
    expect(textOf((await moving) as CallToolResult)).toContain('files: moved');
  });

  it('a call its rule lets the chat approve is approved there, recorded via mcp', async () => {
    const { client, forms } = await carolsChat(autoAccept);
    const moved = (await client.callTool({
      name: 'files__move_file',
      arguments: { from: '/chat/c', to: '/chat/d' },
    })) as CallToolResult;
    expect(textOf(moved)).toBe('files: moved /chat/c to /chat/d');
    expect(forms).toHaveLength(1);
    expect(forms[0].message).toMatch(/^Allow files__move_file with \{"from":"\/chat\/c","to":"\/chat\/d"\}\?/);
    const approved = await api.get('/v1/audit/events?toolName=files__move_file&type=ToolCallApproved', annToken);
    // Recorded for what it is: the client relayed it, with no proof a person saw the call.
    expect(approved.body.events.at(-1)).toMatchObject({
      actor: { id: 'carol', via: 'mcp', assurance: 'client' },
      data: { approvedBy: 'carol' },
    });
    const decided = await api.get(`/v1/tool-calls/${approved.body.events.at(-1).toolCallId}`, annToken);
    expect(decided.body.decision.by).toEqual({ id: 'carol', name: 'Carol', via: 'mcp', assurance: 'client' });
  });

  it('allowChatApproval: false: the chat may only reject, which it does when the person chooses to', async () => {
    const { client, forms } = await carolsChat((form) => ({
      action: 'accept',
      content: { ...autoAccept(form).content, decision: 'reject', reason: 'not from here' },
    }));
    const result = (await client.callTool({
      name: 'files__move_file',
      arguments: { from: '/nochat/e', to: '/chat/f' },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('rejected by Carol via mcp: not from here');
    // The call's view says what the rule says (approval.chatApproval: false): no form ever offered Approve.
    expect(forms.length).toBeGreaterThan(0);
    for (const f of forms) expect(JSON.stringify(f.requestedSchema)).not.toMatch(/"approve"/);
    const last = forms.at(-1)!;
    expect(last.message).toMatch(/cannot be approved in this chat: its rule does not take approvals from a chat/);
    expect(last.requestedSchema!.properties.decision).toMatchObject({ default: 'wait' });
  });
});
