/**
 * A call whose rule asks for a passkey (`stepUp: passkey`) is approved only in the web inbox, where a passkey signs
 * for it: Slack's message offers Reject only and links to the card. An Approve click from an older message, or an
 * "Always allow…" submitted for it, reaches the server and is refused (step_up_required): the person is told why
 * and where to go, and the call stays pending. Slack's Web API is a stand-in.
 */
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import {
  buttonClick,
  rejectSubmission,
  SLACK_CHANNEL_ID,
  slackRequest,
  SlackStandIn,
  startSlackStandIn,
} from '../support/slack-stand-in';
import { eventually } from '../support/wait';

const PUBLIC_URL = 'https://tollgate.example.com';
const SIGNING_SECRET = 'slack-signing-secret-for-passkeys-0123';
const APPROVER = { id: 'U0PASSKEY', name: 'ann-on-slack' };
let slack: SlackStandIn;
let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let root: string;

beforeAll(async () => {
  slack = await startSlackStandIn();
  server = await startTestServer({
    outboxPollMs: 100,
    publicUrl: PUBLIC_URL,
    slack: {
      botToken: 'xoxb-passkey',
      signingSecret: SIGNING_SECRET,
      channel: '#approvals',
      apiUrl: slack.url,
      tenant: 'default',
      people: { [APPROVER.id]: 'ann' },
    },
  });
  http = client(server.url);
  expect((await http.get('/v1/me', await server.token('ann', ['approver'], { name: 'Ann' }))).status).toBe(200);
  agent = await server.token('pay-bot', ['agent']);
  root = await server.token('root', ['admin']);
  const policy = await http.put('/v1/policy', root, {
    rules: [
      { match: 'wire_money', level: 'confirm', stepUp: 'passkey' },
      { match: '*', level: 'confirm' },
    ],
  });
  expect(policy.status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
  await slack?.close();
});

let n = 0;
async function posted(toolName: string): Promise<{ id: string; message: any; ts: string }> {
  const conv = `passkey-${++n}`;
  expect((await http.post('/v1/conversations', agent, { id: conv })).status).toBe(201);
  const r = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName, arguments: { to: 'ACME', amount: 950000 } }],
  });
  expect(r.body.toolCalls[0].status).toBe('pending');
  const id = r.body.toolCalls[0].id;
  const message = await eventually(
    () => slack.callsTo('chat.postMessage').find((c) => JSON.stringify(c.args).includes(id)),
    10_000,
    `the request for ${id} posted to Slack`,
  );
  const rows = await eventually(async () => {
    const q = await server.dataSource.query(`SELECT ts FROM slack_messages WHERE tool_call_id = $1`, [id]);
    return q.length ? q : undefined;
  });
  return { id, message: message.args, ts: rows[0].ts };
}

const actionIds = (m: any): string[] =>
  (typeof m.blocks === 'string' ? JSON.parse(m.blocks) : m.blocks)
    .flatMap((b: any) => b.elements ?? [])
    .map((e: any) => e.action_id)
    .filter(Boolean);

async function interact(payload: unknown) {
  const { body, headers } = slackRequest(SIGNING_SECRET, payload);
  return http.call('POST', '/v1/slack/interactions', { raw: body, headers });
}

const status = async (id: string) => (await http.get(`/v1/tool-calls/${id}`, root)).body.status;

describe('Slack and calls that need a passkey', () => {
  it('offers Reject only, says a passkey is needed, and links to the card', async () => {
    const { id, message } = await posted('wire_money');
    const text = JSON.stringify(message);
    expect(text).toContain('Needs a passkey');
    expect(text).toContain(`<${PUBLIC_URL}/#/calls/${id}|`);
    expect(actionIds(message)).toEqual(['tollgate_reject']);
  });

  it('keeps Approve for calls whose rule asks no passkey', async () => {
    const { message } = await posted('send_invoice');
    expect(actionIds(message)).toEqual(['tollgate_approve', 'tollgate_reject', 'tollgate_always_allow']);
    expect(JSON.stringify(message)).not.toContain('Needs a passkey');
  });

  it("refuses a stale Approve click with the domain's reason and the card's link; the call stays pending", async () => {
    const { id, ts } = await posted('wire_money');
    const before = slack.callsTo('chat.postEphemeral').length;
    expect(
      (await interact(buttonClick(APPROVER, 'tollgate_approve', id, { channel: SLACK_CHANNEL_ID, ts }))).status,
    ).toBe(200);
    const told = await eventually(
      () =>
        slack
          .callsTo('chat.postEphemeral')
          .slice(before)
          .find((c) => c.args.user === APPROVER.id),
      10_000,
      'the refusal told to the approver',
    );
    expect(told.args.text).toContain('Tollgate refused: This call needs a passkey');
    expect(told.args.text).toContain(`<${PUBLIC_URL}/#/calls/${id}|open the card in the Tollgate inbox>`);
    expect(await status(id)).toBe('pending');
    const refused = await http.get(`/v1/audit/events?toolCallId=${id}&type=DecisionRefused`, root);
    expect(refused.body.events.at(-1).data).toMatchObject({ code: 'step_up_required' });
  });

  it('shows the refusal in an "Always allow…" modal, and the link in the channel', async () => {
    const { id, ts } = await posted('wire_money');
    const before = slack.callsTo('chat.postEphemeral').length;
    const submitted = await interact({
      type: 'view_submission',
      user: { id: APPROVER.id, username: APPROVER.name, name: APPROVER.name },
      team: { id: 'T0TEAM' },
      view: {
        callback_id: 'tollgate_always_allow_modal',
        private_metadata: JSON.stringify({ toolCallId: id, channel: SLACK_CHANNEL_ID, ts }),
        state: {
          values: {
            scope: { scope: { type: 'radio_buttons', selected_option: { value: 'conversation' } } },
            expiry: { expiry: { type: 'static_select', selected_option: { value: '3600' } } },
          },
        },
      },
    });
    expect(submitted.status).toBe(200);
    expect(submitted.body).toMatchObject({
      response_action: 'errors',
      errors: { scope: expect.stringContaining('passkey') },
    });
    const told = await eventually(() =>
      slack
        .callsTo('chat.postEphemeral')
        .slice(before)
        .find((c) => c.args.user === APPROVER.id),
    );
    expect(told.args.text).toContain(`${PUBLIC_URL}/#/calls/${id}`);
    expect(await status(id)).toBe('pending');
  });

  it('still rejects from Slack: a rejection needs no passkey', async () => {
    const { id, ts } = await posted('wire_money');
    const click = buttonClick(APPROVER, 'tollgate_reject', id, { channel: SLACK_CHANNEL_ID, ts });
    await interact(click);
    const opened = await eventually(() =>
      slack.callsTo('views.open').find((c) => c.args.trigger_id === click.trigger_id),
    );
    const submitted = await interact(rejectSubmission(APPROVER, opened.args.view, 'not this month'));
    expect(submitted.status).toBe(200);
    expect(await status(id)).toBe('rejected');
  });
});
