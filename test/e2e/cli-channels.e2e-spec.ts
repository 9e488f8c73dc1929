/**
 * Issue 6's "done when", with the real CLI: Slack (a stand-in for its Web API), a webhook and `tollgate inbox`
 * in a terminal, configured at once. One request appears in all three; a decision in Slack shows in the
 * inbox, and a key press in the inbox shows in Slack and at the webhook (order and outcome are asserted; timings belong in `npm run bench`).
 */
import { client } from '../support/http';
import { cliEnv, spawnTerminal, Terminal } from '../support/pty';
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
const SLACK_USER = { id: 'U0BEA', name: 'bea' };

describe('Slack, a webhook and tollgate inbox at once', () => {
  let slack: SlackStandIn;
  let hooks: WebhookReceiver;
  let server: TestServer;
  let http: ReturnType<typeof client>;
  let agent: string;
  let term: Terminal;

  beforeAll(async () => {
    slack = await startSlackStandIn();
    hooks = await startWebhookReceiver();
    server = await startTestServer({
      outboxPollMs: 100,
      streamPollMs: 200,
      slack: {
        botToken: 'xoxb-test',
        signingSecret: SIGNING_SECRET,
        channel: SLACK_CHANNEL_ID,
        apiUrl: slack.url,
        tenant: 'default',
        people: { [SLACK_USER.id]: 'bea' },
      },
    });
    http = client(server.url);
    agent = await server.token('support-bot', ['agent']);
    const ann = await server.token('ann', ['admin'], { name: 'Ann' });
    // The Slack user acts as the person bea, with the roles of her own sign-in.
    expect((await http.get('/v1/me', await server.token('bea', ['approver'], { name: 'Bea' }))).status).toBe(200);
    expect(
      (
        await http.post('/v1/webhooks', ann, {
          url: hooks.url,
          events: ['ApprovalRequested', 'ToolCallApproved', 'ToolCallRejected'],
        })
      ).status,
    ).toBe(201);
    term = spawnTerminal(['inbox'], cliEnv({ url: server.url, token: ann }));
    await term.waitFor('● live');
  });

  afterAll(async () => {
    term?.kill();
    await server?.stop();
    await slack?.close();
    await hooks?.close();
  });

  let n = 0;
  /** Proposes one call and waits until Slack, the webhook and the terminal all show it; answers the Slack message's ts. */
  async function appearsInAllThree(toolName: string): Promise<{ id: string; ts: string }> {
    const conv = `three-${++n}`;
    await http.post('/v1/conversations', agent, { id: conv, user: { id: 'u-dave' } });
    const m = term.mark();
    const res = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
      toolCalls: [{ toolName, arguments: { n } }],
    });
    const id = res.body.toolCalls[0].id as string;
    await term.waitFor(`new: ${toolName} ${id}`, m);
    const ts = await eventually(
      async () =>
        (await server.dataSource.query(`SELECT ts FROM slack_messages WHERE tool_call_id = $1`, [id]))[0]?.ts as
          string | undefined,
    );
    await eventually(() =>
      hooks.received.find((r) => r.json.type === 'ApprovalRequested' && r.json.data.toolCallId === id),
    );
    return { id, ts };
  }

  it('a Slack click shows in the inbox (who, via slack)', async () => {
    const { id, ts } = await appearsInAllThree('close_account');
    const m = term.mark();
    const { body, headers } = slackRequest(
      SIGNING_SECRET,
      buttonClick(SLACK_USER, 'tollgate_approve', id, { channel: SLACK_CHANNEL_ID, ts }),
    );
    expect((await http.call('POST', '/v1/slack/interactions', { raw: body, headers })).status).toBe(200);
    await term.waitFor(new RegExp(`close_account ${id} approved by \\S+ via slack`), m, 5000);
  });

  it('`a` in the inbox shows in Slack and at the webhook, via cli', async () => {
    const { id, ts } = await appearsInAllThree('refund_order');
    const m = term.mark();
    const pressed = Date.now();
    term.write('a');
    await term.waitFor(`refund_order ${id} approved by you via cli`, m);
    const update = await eventually(() => slack.callsTo('chat.update').find((c) => c.args.ts === ts), 5000);
    const hook = await eventually(
      () => hooks.received.find((r) => r.json.type === 'ToolCallApproved' && r.json.data.toolCallId === id),
      5000,
    );
    expect(update.at).toBeGreaterThanOrEqual(pressed);
    expect(hook.at).toBeGreaterThanOrEqual(pressed);
    expect(JSON.stringify(update.args.blocks)).toContain('via cli');
    expect(hook.json.data.data).toMatchObject({ via: 'cli', approvedBy: 'ann' });
  });
});
