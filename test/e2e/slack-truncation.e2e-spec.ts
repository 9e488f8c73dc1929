/**
 * The review's reproduction: Slack clipped a call's arguments at about 2,960 characters and still offered Approve,
 * so the agent chose what the approver did not see (`amount: 950000` after padding). Now a message whose arguments
 * do not fit keeps only Reject and links to the whole card at TOLLGATE_PUBLIC_URL. Slack's Web API is a stand-in.
 */
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { SlackStandIn, startSlackStandIn } from '../support/slack-stand-in';
import { eventually } from '../support/wait';

const PUBLIC_URL = 'https://tollgate.example.com';
let slack: SlackStandIn;
let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;

beforeAll(async () => {
  slack = await startSlackStandIn();
  server = await startTestServer({
    outboxPollMs: 100,
    publicUrl: PUBLIC_URL,
    slack: {
      botToken: 'xoxb-truncation',
      signingSecret: 'slack-signing-secret-for-truncation-0123',
      channel: '#approvals',
      apiUrl: slack.url,
      tenant: 'default',
      people: {},
    },
  });
  http = client(server.url);
  agent = await server.token('pay-bot', ['agent']);
  const root = await server.token('root', ['admin']);
  expect((await http.put('/v1/policy', root, { rules: [{ match: '*', level: 'confirm' }] })).status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
  await slack?.close();
});

async function posted(args: Record<string, unknown>): Promise<{ id: string; message: any }> {
  const conv = `trunc-${Math.random().toString(36).slice(2)}`;
  expect((await http.post('/v1/conversations', agent, { id: conv })).status).toBe(201);
  const r = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName: 'wire_money', arguments: args }],
  });
  const id = r.body.toolCalls[0].id;
  const message = await eventually(
    () => slack.callsTo('chat.postMessage').find((c) => JSON.stringify(c.args).includes(id)),
    10_000,
    `the request for ${id} posted to Slack`,
  );
  return { id, message: message.args };
}

const actionIds = (m: any): string[] =>
  (typeof m.blocks === 'string' ? JSON.parse(m.blocks) : m.blocks)
    .flatMap((b: any) => b.elements ?? [])
    .map((e: any) => e.action_id)
    .filter(Boolean);

describe('Slack never offers Approve beside arguments it had to cut', () => {
  it('keeps only Reject and links to the whole card when the arguments do not fit', async () => {
    const { id, message } = await posted({ memo: 'x'.repeat(4000), amount: 950000 });
    const text = JSON.stringify(message);
    expect(text).toContain('Arguments too long to show here');
    expect(text).toContain(`${PUBLIC_URL}/#/calls/${id}`);
    expect(actionIds(message).some((a) => /approve|always/i.test(a))).toBe(false);
    expect(actionIds(message).some((a) => /reject/i.test(a))).toBe(true);
  });

  it('offers Approve when the arguments are shown whole', async () => {
    const { message } = await posted({ amount: 950000 });
    expect(JSON.stringify(message)).toContain('950000');
    expect(actionIds(message).some((a) => /approve/i.test(a))).toBe(true);
  });
});
