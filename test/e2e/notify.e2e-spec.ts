/**
 * The `notify` level tells people: the call runs at once (the agent never waits), and a ToolCallNotified event
 * in the audit trail names who is told — the deciding rule's approvers — and on which channels. Slack gets one
 * FYI message without buttons; a webhook subscribed to ToolCallNotified receives it. Slack is a stand-in.
 */
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { SlackStandIn, startSlackStandIn } from '../support/slack-stand-in';
import { startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';
import { eventually, until } from '../support/wait';

let slack: SlackStandIn;
let hooks: WebhookReceiver;
let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let admin: string;

beforeAll(async () => {
  slack = await startSlackStandIn();
  hooks = await startWebhookReceiver();
  server = await startTestServer({
    outboxPollMs: 50,
    slack: {
      botToken: 'xoxb-notify',
      signingSecret: 'slack-signing-secret-notify-0123456789',
      channel: '#approvals',
      apiUrl: slack.url,
      tenant: 'default',
      people: {},
    },
  });
  http = client(server.url);
  agent = await server.token('support-bot', ['agent']);
  admin = await server.token('root', ['admin'], { name: 'Root' });
  const policy = await http.put('/v1/policy', admin, {
    rules: [
      { match: 'get_*', level: 'automatic' },
      { match: 'send_email', level: 'notify', approvers: ['requester', 'admin'] },
    ],
  });
  expect(policy.status).toBe(200);
  expect((await http.post('/v1/webhooks', admin, { url: hooks.url, events: ['ToolCallNotified'] })).status).toBe(201);
});

afterAll(async () => {
  await server?.stop();
  await slack?.close();
  await hooks?.close();
});

async function propose(conv: string, toolName: string, extra: Record<string, unknown> = {}) {
  const res = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName, arguments: { to: 'carol@example.com' }, ...extra }],
  });
  expect(res.status).toBe(201);
  return res.body.toolCalls[0];
}

describe('a notify call', () => {
  it('runs at once, is recorded as told to the rule’s approvers, posts one Slack FYI without buttons, and reaches a subscribed webhook', async () => {
    expect(
      (await http.post('/v1/conversations', agent, { id: 'notify-1', user: { id: 'u-carol', name: 'Carol' } })).status,
    ).toBe(201);
    const call = await propose('notify-1', 'send_email', {
      reason: '<!channel> mail the <https://evil.example|report>',
    });
    expect(call).toMatchObject({ status: 'approved', policy: { level: 'notify', rule: 1 } });

    // The agent is never blocked: it claims the run at once, and its next proposal is not held behind the FYI.
    expect((await http.post(`/v1/tool-calls/${call.id}/execution`, agent)).status).toBe(200);
    expect((await propose('notify-1', 'get_inbox')).status).toBe('approved');

    const trail = await http.get(`/v1/audit/events?toolCallId=${call.id}`, admin);
    const types = trail.body.events.map((e: any) => e.type);
    expect(types.slice(0, 3)).toEqual(['ToolCallProposed', 'ToolCallAutoApproved', 'ToolCallNotified']);
    const told = trail.body.events[2];
    expect(told).toMatchObject({ actor: { id: 'policy', via: 'policy' }, toolName: 'send_email' });
    expect(told.data).toEqual({
      level: 'notify',
      rule: 1,
      policyVersion: expect.any(Number),
      approvers: ['requester', 'admin'],
      requester: 'u-carol',
      channels: ['slack', 'webhook', 'inbox'],
    });

    const fyi = await eventually(
      () => slack.callsTo('chat.postMessage').find((c) => c.args.text.includes(call.id)),
      10_000,
      'the Slack FYI',
    );
    const blocks = JSON.stringify(fyi.args.blocks);
    expect(fyi.args.text).toContain('Ran at once, FYI: send_email');
    expect(fyi.args.text).toContain('by policy rule 1');
    expect(fyi.args.blocks.some((b: any) => b.type === 'actions')).toBe(false);
    expect(blocks).toContain('requester, admin');
    expect(blocks).not.toContain('<!channel>'); // the agent's text is escaped as in every message
    expect(blocks).toContain('&lt;!channel&gt;');

    const delivered = await eventually(
      () => hooks.received.find((d) => d.json.data.toolCallId === call.id),
      10_000,
      'the webhook delivery',
    );
    expect(delivered.json).toMatchObject({
      type: 'ToolCallNotified',
      data: { type: 'ToolCallNotified', data: { approvers: ['requester', 'admin'] } },
    });

    // Posted once, never updated: nothing is left to decide, and the call's later life does not touch it.
    expect((await http.post(`/v1/tool-calls/${call.id}/result`, agent, { outcome: 'succeeded' })).status).toBe(200);
    await until(
      async () => (await http.get(`/v1/tool-calls/${call.id}`, admin)).body.status === 'completed',
      10_000,
      'completed',
    );
    const lastSeq = (await http.get(`/v1/audit/events?toolCallId=${call.id}`, admin)).body.events.at(-1).seq;
    expect(lastSeq).toEqual(expect.any(Number));
    await until(
      async () => {
        const rows = await server.dataSource.query(
          `SELECT last_seq FROM outbox_cursors WHERE tenant_id = 'default' AND consumer = 'slack'`,
        );
        return rows.length === 1 && Number(rows[0].last_seq) >= lastSeq;
      },
      10_000,
      "Slack's outbox cursor past the completion",
    );
    expect(slack.callsTo('chat.postMessage').filter((c) => c.args.text.includes(call.id))).toHaveLength(1);
    expect(slack.callsTo('chat.update').filter((c) => c.args.text.includes(call.id))).toHaveLength(0);
  });

  it('is not a notify call when the policy lets it run automatically: no one is told', async () => {
    expect((await http.post('/v1/conversations', agent, { id: 'notify-2' })).status).toBe(201);
    const call = await propose('notify-2', 'get_inbox');
    expect(call.status).toBe('approved');
    const told = await http.get(`/v1/audit/events?toolCallId=${call.id}&type=ToolCallNotified`, admin);
    expect(told.body.events).toEqual([]);
  });
});
