/**
 * The Slack approver (issue 6, CONTRACT §10–11): a Block Kit message per request, clicks accepted only when
 * signed by Slack within five minutes, Slack users linked to Tollgate persons (who decide with their own roles), a reason asked for on reject, and the
 * message updated whichever channel ended the request. Slack's Web API is a stand-in on 127.0.0.1.
 */
import { slackSignature } from '../../src/adapters/slack/slack-signature';
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import {
  buttonClick,
  rejectSubmission,
  SLACK_CHANNEL_ID,
  SlackCall,
  slackRequest,
  SlackStandIn,
  startSlackStandIn,
} from '../support/slack-stand-in';
import { eventually, until } from '../support/wait';

const SIGNING_SECRET = 'slack-signing-secret-for-tests-0123456789';
const BOT_TOKEN = 'xoxb-test-bot-token';
/** Slack users linked to the persons `ann` (an approver) and `bob` (an admin) by TOLLGATE_SLACK_APPROVERS. */
const APPROVER = { id: 'U0APPROVER', name: 'ann-on-slack' };
const ADMIN = { id: 'U0ADMIN', name: 'bob-on-slack' };
const STRANGER = { id: 'U0STRANGER', name: 'mallory' };

let slack: SlackStandIn;
let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let admin: string;

beforeAll(async () => {
  slack = await startSlackStandIn();
  server = await startTestServer({
    outboxPollMs: 100,
    sweepIntervalMs: 100,
    slack: {
      botToken: BOT_TOKEN,
      signingSecret: SIGNING_SECRET,
      channel: '#approvals',
      apiUrl: slack.url,
      tenant: 'default',
      people: { [APPROVER.id]: 'ann', [ADMIN.id]: 'bob' },
    },
  });
  http = client(server.url);
  // A person's record (and so their roles in Slack) comes from their own sign-in.
  expect((await http.get('/v1/me', await server.token('ann', ['approver'], { name: 'Ann' }))).status).toBe(200);
  expect((await http.get('/v1/me', await server.token('bob', ['admin'], { name: 'Bob' }))).status).toBe(200);
  agent = await server.token('support-bot', ['agent']);
  admin = await server.token('root', ['admin'], { name: 'Root' });
  const policy = await http.put('/v1/policy', admin, {
    rules: [
      { match: 'quick_*', level: 'confirm', timeoutSeconds: 1 },
      { match: 'admins_only', level: 'confirm', approvers: ['admin'] },
    ],
  });
  expect(policy.status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
  await slack?.close();
});

let n = 0;
async function pendingCall(toolName = 'delete_source', extra: Record<string, unknown> = {}) {
  const conv = `slack-conv-${++n}`;
  expect(
    (
      await http.post('/v1/conversations', agent, {
        id: conv,
        user: { id: 'u-carol', name: 'Carol' },
        title: 'Tidy the knowledge base',
      })
    ).status,
  ).toBe(201);
  const res = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName, arguments: { id: 'src_2' }, ...extra }],
  });
  expect(res.status).toBe(201);
  expect(res.body.toolCalls[0].status).toBe('pending');
  return res.body.toolCalls[0];
}

function messageFor(callId: string): Promise<SlackCall> {
  return eventually(
    () => slack.callsTo('chat.postMessage').find((c) => c.args.text.includes(callId)),
    10_000,
    `Slack message for ${callId}`,
  );
}

/** The ts the stand-in gave a message, read from the row the adapter stored. */
async function tsOf(callId: string): Promise<string> {
  const rows = await eventually(async () => {
    const r = await server.dataSource.query(
      `SELECT ts FROM slack_messages WHERE tenant_id = 'default' AND tool_call_id = $1`,
      [callId],
    );
    return r.length ? r : undefined;
  });
  return rows[0].ts;
}

async function interact(payload: unknown, opts: Parameters<typeof slackRequest>[2] = {}): Promise<Reply> {
  const { body, headers } = slackRequest(SIGNING_SECRET, payload, opts);
  return http.call('POST', '/v1/slack/interactions', { raw: body, headers });
}

function blockText(c: SlackCall): string {
  return JSON.stringify(c.args.blocks);
}

function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

async function statusOf(callId: string): Promise<any> {
  return (await http.get(`/v1/tool-calls/${callId}`, admin)).body;
}

describe('Slack approval requests', () => {
  it('posts a Block Kit message with tool, agent, user, reason, display fields, arguments, expiry and Approve / Reject buttons', async () => {
    const call = await pendingCall('delete_source', {
      reason: 'the user asked to delete it',
      display: {
        title: 'Delete source',
        summary: 'Delete source Handbook: 1,204 objects.',
        fields: [{ label: 'Objects', value: '1,204' }],
      },
    });
    const msg = await messageFor(call.id);
    expect(msg.token).toBe(BOT_TOKEN);
    expect(msg.args.channel).toBe('#approvals');
    const text = blockText(msg);
    for (const part of [
      'delete_source',
      'support-bot',
      'Carol',
      'Tidy the knowledge base',
      'the user asked to delete it',
      'Delete source Handbook',
      'Objects',
      '1,204',
      'src_2',
      '<!date^',
    ]) {
      expect(text).toContain(part);
    }
    const actions = msg.args.blocks.find((b: any) => b.type === 'actions');
    expect(actions.elements.map((e: any) => [e.action_id, e.value, e.style])).toEqual([
      ['tollgate_approve', call.id, 'primary'],
      ['tollgate_reject', call.id, 'danger'],
    ]);
  });

  it("escapes the agent's text, so it cannot mention @channel or hide a link", async () => {
    const call = await pendingCall('send_email', { reason: '<!channel> see <https://evil.example|docs> & more' });
    const text = blockText(await messageFor(call.id));
    expect(text).not.toContain('<!channel>');
    expect(text).toContain('&lt;!channel&gt; see &lt;https://evil.example|docs&gt; &amp; more');
  });

  it('is posted once Slack answers again after failing, and only once', async () => {
    slack.fail('chat.postMessage', 2, { status: 503 });
    const call = await pendingCall();
    const ts = await tsOf(call.id); // stored once Slack accepted it
    await new Promise((r) => setTimeout(r, 300));
    const attempts = slack.callsTo('chat.postMessage').filter((c) => c.args.text.includes(call.id));
    expect(attempts).toHaveLength(3); // two refused, then posted; never twice
    expect(attempts[2].at - attempts[0].at).toBeGreaterThanOrEqual(2500); // the outbox's backoff: 1 s, then 2 s
    expect(ts).toMatch(/^\d+\.\d+$/);
  }, 20_000);
});

describe('Slack interactions are authenticated by signature', () => {
  it.each([
    ['a wrong signature', { signature: 'v0=' + '0'.repeat(64) }],
    [
      'a signature made with another secret',
      { signature: slackRequest('another-secret', {}).headers['x-slack-signature'] },
    ],
    ['a stale timestamp (over five minutes old)', { timestamp: Math.floor(Date.now() / 1000) - 400 }],
    ['a timestamp from the future', { timestamp: Math.floor(Date.now() / 1000) + 400 }],
    ['no signature', { omitSignature: true }],
  ])('refuses %s with 401 and decides nothing', async (_label, opts) => {
    const call = await pendingCall();
    const res = await interact(buttonClick(APPROVER, 'tollgate_approve', call.id), opts as any);
    expectProblem(res, 401, 'unauthenticated');
    await new Promise((r) => setTimeout(r, 200));
    expect((await statusOf(call.id)).status).toBe('pending');
  });

  it('refuses a body changed after signing', async () => {
    const call = await pendingCall();
    const signed = slackRequest(SIGNING_SECRET, buttonClick(STRANGER, 'tollgate_approve', call.id));
    const tampered = slackRequest(SIGNING_SECRET, buttonClick(APPROVER, 'tollgate_approve', call.id)).body;
    const res = await http.call('POST', '/v1/slack/interactions', { raw: tampered, headers: signed.headers });
    expectProblem(res, 401, 'unauthenticated');
    expect((await statusOf(call.id)).status).toBe('pending');
  });

  it('needs no bearer token: the signature is the credential', async () => {
    const res = await interact({ type: 'shortcut', user: { id: APPROVER.id } });
    expect(res.status).toBe(200);
  });

  it('answers a signed but malformed payload with 400', async () => {
    const body = 'payload=not-json';
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await http.call('POST', '/v1/slack/interactions', {
      raw: body,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': timestamp,
        'x-slack-signature': slackSignature(SIGNING_SECRET, timestamp, body),
      },
    });
    expectProblem(res, 400, 'validation_failed');
  });
});

describe('deciding in Slack', () => {
  it('tells a Slack user linked to no person, privately, that they may not decide and how to link', async () => {
    const call = await pendingCall();
    const ts = await tsOf(call.id);
    const res = await interact(buttonClick(STRANGER, 'tollgate_approve', call.id, { channel: SLACK_CHANNEL_ID, ts }));
    expect(res.status).toBe(200);
    const ephemeral = await eventually(() =>
      slack.callsTo('chat.postEphemeral').find((c) => c.args.user === STRANGER.id),
    );
    expect(ephemeral.args).toMatchObject({ channel: SLACK_CHANNEL_ID });
    expect(ephemeral.args.text).toMatch(/not linked to a Tollgate person/);
    expect((await statusOf(call.id)).status).toBe('pending');
    // A stranger's Reject opens no modal either.
    const opened = slack.callsTo('views.open').length;
    await interact(buttonClick(STRANGER, 'tollgate_reject', call.id, { channel: SLACK_CHANNEL_ID, ts }));
    await until(() => slack.callsTo('chat.postEphemeral').filter((c) => c.args.user === STRANGER.id).length === 2);
    expect(slack.callsTo('views.open').length).toBe(opened);
  });

  it("approves on an approver's click: Slack is answered at once, the agent's long-poll returns, the message shows the outcome", async () => {
    const call = await pendingCall();
    const ts = await tsOf(call.id);
    const waiting = http.get(`/v1/tool-calls/${call.id}?wait=20`, agent);
    await new Promise((r) => setTimeout(r, 100));
    const res = await interact(buttonClick(APPROVER, 'tollgate_approve', call.id, { channel: SLACK_CHANNEL_ID, ts }));
    expect(res.status).toBe(200);
    const waited = await waiting;
    expect(waited.body.status).toBe('approved');
    expect(waited.body.decision).toMatchObject({
      outcome: 'approved',
      by: { id: 'ann', name: 'Ann', via: 'slack' },
    });
    const update = await eventually(() => slack.callsTo('chat.update').find((c) => c.args.ts === ts));
    expect(update.args.channel).toBe(SLACK_CHANNEL_ID);
    expect(update.args.blocks.some((b: any) => b.type === 'actions')).toBe(false);
    expect(blockText(update)).toContain('Approved');
    expect(blockText(update)).toContain('Ann (ann)');
    // The audit trail records the channel.
    const events = await http.get(`/v1/audit/events?toolCallId=${call.id}&type=ToolCallApproved`, admin);
    expect(events.body.events[0].data).toMatchObject({ via: 'slack', approvedBy: 'ann' });
    expect(events.body.events[0].actor).toMatchObject({ id: 'ann', via: 'slack', channelUser: APPROVER.id });
  });

  it('opens a modal asking why on Reject, and rejects with the reason given', async () => {
    const call = await pendingCall();
    const ts = await tsOf(call.id);
    const click = buttonClick(APPROVER, 'tollgate_reject', call.id, { channel: SLACK_CHANNEL_ID, ts });
    expect((await interact(click)).status).toBe(200);
    const opened = await eventually(() =>
      slack.callsTo('views.open').find((c) => c.args.trigger_id === click.trigger_id),
    );
    expect(opened.args.view).toMatchObject({ type: 'modal', callback_id: 'tollgate_reject_modal' });
    expect(JSON.parse(opened.args.view.private_metadata)).toEqual({
      toolCallId: call.id,
      channel: SLACK_CHANNEL_ID,
      ts,
    });
    expect((await statusOf(call.id)).status).toBe('pending'); // a click alone rejects nothing

    const empty = await interact(rejectSubmission(APPROVER, opened.args.view, '   '));
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ response_action: 'errors', errors: { reason: expect.any(String) } });

    const submitted = await interact(rejectSubmission(APPROVER, opened.args.view, 'wrong source: keep the handbook'));
    expect(submitted.status).toBe(200);
    expect(submitted.body).toBe(''); // the modal closes
    const after = await statusOf(call.id);
    expect(after.status).toBe('rejected');
    expect(after.decision).toMatchObject({
      outcome: 'rejected',
      reason: 'wrong source: keep the handbook',
      by: { id: 'ann', via: 'slack' },
    });
    const update = await eventually(() => slack.callsTo('chat.update').find((c) => c.args.ts === ts));
    expect(blockText(update)).toContain('Rejected');
    expect(blockText(update)).toContain('wrong source: keep the handbook');
  });

  it('shows a refusal in the modal when the call was decided meanwhile', async () => {
    const call = await pendingCall();
    const ts = await tsOf(call.id);
    const click = buttonClick(APPROVER, 'tollgate_reject', call.id, { channel: SLACK_CHANNEL_ID, ts });
    await interact(click);
    const opened = await eventually(() =>
      slack.callsTo('views.open').find((c) => c.args.trigger_id === click.trigger_id),
    );
    expect((await http.post(`/v1/tool-calls/${call.id}/decision`, admin, { decision: 'approve' })).status).toBe(200);
    const res = await interact(rejectSubmission(APPROVER, opened.args.view, 'too late'));
    expect(res.body).toMatchObject({
      response_action: 'errors',
      errors: { reason: expect.stringMatching(/already/i) },
    });
    expect((await statusOf(call.id)).status).toBe('approved');
  });

  it('tells a second clicker, privately, that the call was already decided', async () => {
    const call = await pendingCall();
    const ts = await tsOf(call.id);
    await interact(buttonClick(APPROVER, 'tollgate_approve', call.id, { channel: SLACK_CHANNEL_ID, ts }));
    await until(async () => (await statusOf(call.id)).status === 'approved');
    const before = slack.callsTo('chat.postEphemeral').length;
    await interact(buttonClick(ADMIN, 'tollgate_approve', call.id, { channel: SLACK_CHANNEL_ID, ts }));
    const refusal = await eventually(() =>
      slack
        .callsTo('chat.postEphemeral')
        .slice(before)
        .find((c) => c.args.user === ADMIN.id),
    );
    expect(refusal.args.text).toMatch(/already/i);
  });

  it("refuses, privately, a Slack approver whose role the call's approvers lack", async () => {
    const call = await pendingCall('admins_only');
    const ts = await tsOf(call.id);
    await interact(buttonClick(APPROVER, 'tollgate_approve', call.id, { channel: SLACK_CHANNEL_ID, ts }));
    const refusal = await eventually(() =>
      slack.callsTo('chat.postEphemeral').find((c) => c.args.user === APPROVER.id && /admin/.test(c.args.text)),
    );
    expect(refusal.args.text).toMatch(/refused/);
    expect((await statusOf(call.id)).status).toBe('pending');
    await interact(buttonClick(ADMIN, 'tollgate_approve', call.id, { channel: SLACK_CHANNEL_ID, ts }));
    await until(async () => (await statusOf(call.id)).status === 'approved');
  });
});

describe('the Slack message follows the outcome wherever it happened', () => {
  it('is updated when the call is decided through the API', async () => {
    const call = await pendingCall();
    const ts = await tsOf(call.id);
    const decided = await http.post(
      `/v1/tool-calls/${call.id}/decision`,
      admin,
      { decision: 'reject', reason: 'not today' },
      { 'X-Tollgate-Channel': 'cli' },
    );
    expect(decided.status).toBe(200);
    const update = await eventually(() => slack.callsTo('chat.update').find((c) => c.args.ts === ts), 5000);
    expect(blockText(update)).toContain('Rejected');
    expect(blockText(update)).toContain('Root (root) via cli');
    expect(blockText(update)).toContain('not today');
  });

  it('is updated when the request expires', async () => {
    const call = await pendingCall('quick_delete');
    const ts = await tsOf(call.id);
    const update = await eventually(() => slack.callsTo('chat.update').find((c) => c.args.ts === ts), 8000);
    expect(blockText(update)).toContain('Expired');
    expect(update.args.blocks.some((b: any) => b.type === 'actions')).toBe(false);
  });

  it('is updated when a halt cancels the request', async () => {
    const call = await pendingCall();
    const ts = await tsOf(call.id);
    const halted = await http.post('/v1/halt', admin, {
      scope: 'conversation',
      id: call.conversationId,
      reason: 'incident drill',
    });
    expect(halted.status).toBe(200);
    const update = await eventually(() => slack.callsTo('chat.update').find((c) => c.args.ts === ts));
    expect(blockText(update)).toContain('Cancelled');
    expect(blockText(update)).toContain('incident drill');
  });

  it('is updated once, even when Slack fails the update at first', async () => {
    const call = await pendingCall();
    const ts = await tsOf(call.id);
    slack.fail('chat.update', 1, { status: 500 });
    await http.post(`/v1/tool-calls/${call.id}/decision`, admin, { decision: 'approve' });
    await until(
      () => slack.callsTo('chat.update').filter((c) => c.args.ts === ts).length === 2,
      10_000,
      'retried update',
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(slack.callsTo('chat.update').filter((c) => c.args.ts === ts)).toHaveLength(2); // the failed one, then the one that worked
  }, 15_000);

  it('passes over a message Slack no longer has, and goes on with the next', async () => {
    const gone = await pendingCall();
    const goneTs = await tsOf(gone.id);
    slack.fail('chat.update', 1, { error: 'message_not_found' });
    await http.post(`/v1/tool-calls/${gone.id}/decision`, admin, { decision: 'approve' });
    await until(() => slack.callsTo('chat.update').some((c) => c.args.ts === goneTs));
    const next = await pendingCall();
    const ts = await tsOf(next.id);
    await http.post(`/v1/tool-calls/${next.id}/decision`, admin, { decision: 'approve' });
    await eventually(() => slack.callsTo('chat.update').find((c) => c.args.ts === ts), 5000);
  });
});

describe('tenants', () => {
  it("posts only TOLLGATE_SLACK_TENANT's requests", async () => {
    const otherAgent = await server.token('bot', ['agent'], { tenant: 'other' });
    expect((await http.post('/v1/conversations', otherAgent, { id: 'elsewhere' })).status).toBe(201);
    const res = await http.post('/v1/conversations/elsewhere/tool-calls', otherAgent, {
      toolCalls: [{ toolName: 'delete_source', arguments: {} }],
    });
    const callId = res.body.toolCalls[0].id;
    const marker = await pendingCall(); // posted after the other tenant's request was delivered (or passed over)
    await messageFor(marker.id);
    await new Promise((r) => setTimeout(r, 300));
    expect(slack.callsTo('chat.postMessage').some((c) => c.args.text.includes(callId))).toBe(false);
  });
});
