/**
 * Several UIs, one approval backend (issue 6, "done when"): with Slack and a webhook configured at once, one
 * request appears in Slack, at the webhook receiver and in the people's inbox the CLI and web read
 * (GET /v1/approvals); a decision in any one shows in the others (how fast is measured by `npm run bench`, not asserted here).
 */
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import {
  buttonClick,
  SLACK_CHANNEL_ID,
  slackRequest,
  SlackStandIn,
  startSlackStandIn,
} from '../support/slack-stand-in';
import { eventually } from '../support/wait';
import { startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';

const SIGNING_SECRET = 'slack-signing-secret-for-tests-0123456789';
const APPROVER = { id: 'U0APPROVER', name: 'ann' };

let slack: SlackStandIn;
let hooks: WebhookReceiver;
let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let person: string;
let secret: string;

beforeAll(async () => {
  slack = await startSlackStandIn();
  hooks = await startWebhookReceiver();
  server = await startTestServer({
    outboxPollMs: 100,
    slack: {
      botToken: 'xoxb-test',
      signingSecret: SIGNING_SECRET,
      channel: SLACK_CHANNEL_ID,
      apiUrl: slack.url,
      tenant: 'default',
      people: { [APPROVER.id]: 'ann' },
    },
  });
  http = client(server.url);
  agent = await server.token('support-bot', ['agent']);
  person = await server.token('carol', ['approver'], { name: 'Carol' });
  // The Slack user acts as the person ann, with the roles of her own sign-in.
  expect((await http.get('/v1/me', await server.token('ann', ['approver'], { name: 'Ann' }))).status).toBe(200);
  const admin = await server.token('root', ['admin']);
  const created = await http.post('/v1/webhooks', admin, {
    url: hooks.url,
    events: ['ApprovalRequested', 'ToolCallApproved', 'ToolCallRejected'],
  });
  expect(created.status).toBe(201);
  secret = created.body.secret;
});

afterAll(async () => {
  await server?.stop();
  await slack?.close();
  await hooks?.close();
});

let n = 0;
async function propose() {
  const conv = `multi-${++n}`;
  await http.post('/v1/conversations', agent, { id: conv, user: { id: 'u-dave' } });
  const res = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName: 'delete_source', arguments: { id: 'src_9' } }],
  });
  expect(res.body.toolCalls[0].status).toBe('pending');
  return res.body.toolCalls[0];
}

/** The request as each channel shows it: the Slack message's ts, the webhook delivery, the inbox entry. */
async function appearsEverywhere(callId: string) {
  const ts = await eventually(
    async () =>
      (await server.dataSource.query(`SELECT ts FROM slack_messages WHERE tool_call_id = $1`, [callId]))[0]?.ts as
        string | undefined,
  );
  const hook = await eventually(() =>
    hooks.received.find((r) => r.json.type === 'ApprovalRequested' && r.json.data.toolCallId === callId),
  );
  const inbox = await http.get('/v1/approvals', person);
  expect(inbox.body.items.map((c: any) => c.id)).toContain(callId);
  expect(new StandardWebhook(secret).verify(hook.body, hook.headers)).toBeTruthy();
  return { ts };
}

it('shows one request in Slack, at the webhook and in the inbox; a Slack click reaches the others', async () => {
  const call = await propose();
  const { ts } = await appearsEverywhere(call.id);

  const { body, headers } = slackRequest(
    SIGNING_SECRET,
    buttonClick(APPROVER, 'tollgate_approve', call.id, { channel: SLACK_CHANNEL_ID, ts }),
  );
  const clicked = Date.now();
  expect((await http.call('POST', '/v1/slack/interactions', { raw: body, headers })).status).toBe(200);

  const approved = await eventually(
    () => hooks.received.find((r) => r.json.type === 'ToolCallApproved' && r.json.data.toolCallId === call.id),
    5000,
  );
  expect(approved.at).toBeGreaterThanOrEqual(clicked);
  expect(approved.json.data.data).toMatchObject({ via: 'slack', approvedBy: 'ann' });
  const viaApi = await http.get(`/v1/tool-calls/${call.id}`, person);
  expect(viaApi.body).toMatchObject({ status: 'approved', decision: { by: { via: 'slack' } } });
  expect((await http.get('/v1/approvals', person)).body.items.map((c: any) => c.id)).not.toContain(call.id);
  const update = await eventually(() => slack.callsTo('chat.update').find((c) => c.args.ts === ts), 5000);
  expect(update.at).toBeGreaterThanOrEqual(clicked);
});

it('a decision through the API (CLI or web) reaches Slack and the webhook', async () => {
  const call = await propose();
  const { ts } = await appearsEverywhere(call.id);
  const decided = Date.now();
  const res = await http.post(
    `/v1/tool-calls/${call.id}/decision`,
    person,
    { decision: 'reject', reason: 'not this one' },
    { 'X-Tollgate-Channel': 'cli' },
  );
  expect(res.status).toBe(200);
  const update = await eventually(() => slack.callsTo('chat.update').find((c) => c.args.ts === ts), 5000);
  const hook = await eventually(
    () => hooks.received.find((r) => r.json.type === 'ToolCallRejected' && r.json.data.toolCallId === call.id),
    5000,
  );
  expect(update.at).toBeGreaterThanOrEqual(decided);
  expect(hook.at).toBeGreaterThanOrEqual(decided);
  expect(JSON.stringify(update.args.blocks)).toContain('via cli');
  expect(hook.json.data.data).toMatchObject({ via: 'cli', rejectedBy: 'carol', reason: 'not this one' });
});
