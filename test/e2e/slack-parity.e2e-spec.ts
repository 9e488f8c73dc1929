/**
 * Slack at parity with the web inbox where the medium allows: besides Approve and Reject, a request message has
 * "Always allow…", which opens a modal to choose the grant's scope (only those the person may grant), its
 * lifetime and an optional reason; the decision is the same always_allow as on the web, via slack, and a
 * refusal (a scope wider than the person or the policy allows) shows in the modal. Slack is a stand-in.
 */
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { buttonClick, SlackCall, slackRequest, SlackStandIn, startSlackStandIn } from '../support/slack-stand-in';
import { eventually } from '../support/wait';

const SIGNING_SECRET = 'slack-signing-secret-for-parity-tests-0123';
const APPROVER = { id: 'U0APPROVER', name: 'ann' };
const ADMIN = { id: 'U0ADMIN', name: 'bob' };

let slack: SlackStandIn;
let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let admin: string;

beforeAll(async () => {
  slack = await startSlackStandIn();
  server = await startTestServer({
    outboxPollMs: 100,
    slack: {
      botToken: 'xoxb-parity',
      signingSecret: SIGNING_SECRET,
      channel: '#approvals',
      apiUrl: slack.url,
      tenant: 'default',
      people: { [APPROVER.id]: 'ann', [ADMIN.id]: 'bob' },
    },
  });
  http = client(server.url);
  // The linked persons' roles in Slack are those of their own sign-in.
  expect((await http.get('/v1/me', await server.token('ann', ['approver']))).status).toBe(200);
  expect((await http.get('/v1/me', await server.token('bob', ['admin']))).status).toBe(200);
  agent = await server.token('support-bot', ['agent']);
  admin = await server.token('root', ['admin'], { name: 'Root' });
  const policy = await http.put('/v1/policy', admin, {
    rules: [
      { match: 'narrow_*', level: 'confirm', grants: 'conversation' },
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
async function pendingCall(toolName: string) {
  const conv = `parity-conv-${++n}`;
  expect(
    (await http.post('/v1/conversations', agent, { id: conv, user: { id: 'u-carol', name: 'Carol' } })).status,
  ).toBe(201);
  const res = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName, arguments: { id: 'src_2' } }],
  });
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

async function interact(payload: unknown): Promise<Reply> {
  const { body, headers } = slackRequest(SIGNING_SECRET, payload);
  return http.call('POST', '/v1/slack/interactions', { raw: body, headers });
}

/** Clicks "Always allow…" on the call's message and answers the modal Slack was asked to open. */
async function openAlwaysAllow(user: { id: string; name: string }, callId: string): Promise<any> {
  await messageFor(callId);
  const click = buttonClick(user, 'tollgate_always_allow', callId, slack.messageAbout(callId));
  expect((await interact(click)).status).toBe(200);
  const opened = await eventually(
    () => slack.callsTo('views.open').find((c) => c.args.trigger_id === click.trigger_id),
    10_000,
    'views.open',
  );
  return opened.args.view;
}

/** The always-allow modal submitted with a scope, a lifetime (a select value, or none chosen) and a reason. */
function submission(
  user: { id: string; name: string },
  view: any,
  scope: string,
  expiry: string | null,
  reason?: string,
) {
  return {
    type: 'view_submission',
    user: { id: user.id, username: user.name, name: user.name },
    team: { id: 'T0TEAM' },
    view: {
      callback_id: view.callback_id,
      private_metadata: view.private_metadata,
      state: {
        values: {
          scope: { scope: { type: 'radio_buttons', selected_option: { value: scope } } },
          expiry: { expiry: { type: 'static_select', selected_option: expiry === null ? null : { value: expiry } } },
          reason: { reason: { type: 'plain_text_input', value: reason ?? null } },
        },
      },
    },
  };
}

async function grantsFrom(callId: string): Promise<any[]> {
  const list = await http.get('/v1/grants?status=all', admin);
  expect(list.status).toBe(200);
  return list.body.items.filter((g: any) => g.sourceToolCallId === callId);
}

describe('Always allow from Slack', () => {
  it('puts an "Always allow…" button on the request, apart from Approve and Reject', async () => {
    const call = await pendingCall('deploy_site');
    const actions = (await messageFor(call.id)).args.blocks.filter((b: any) => b.type === 'actions');
    expect(actions.flatMap((b: any) => b.elements.map((e: any) => [e.action_id, e.value]))).toEqual([
      ['tollgate_approve', call.id],
      ['tollgate_reject', call.id],
      ['tollgate_always_allow', call.id],
    ]);
  });

  it('opens a modal offering the scopes the person may grant, a lifetime (a day by default) and a reason', async () => {
    const call = await pendingCall('deploy_site');
    const forAdmin = await openAlwaysAllow(ADMIN, call.id);
    const scopes = (v: any) =>
      v.blocks.find((b: any) => b.block_id === 'scope').element.options.map((o: any) => o.value);
    expect(forAdmin.callback_id).toBe('tollgate_always_allow_modal');
    expect(scopes(forAdmin)).toEqual(['conversation', 'agent', 'tenant']);
    const expiry = forAdmin.blocks.find((b: any) => b.block_id === 'expiry');
    expect(expiry.element.options.map((o: any) => o.value)).toEqual(['3600', '86400', '604800', 'never']);
    expect(expiry.element.initial_option.value).toBe('86400');
    expect(forAdmin.blocks.find((b: any) => b.block_id === 'reason').optional).toBe(true);
    expect(scopes(await openAlwaysAllow(APPROVER, call.id))).toEqual(['conversation']);
  });

  it('approves the call via slack and makes the grant with the chosen scope, lifetime and reason', async () => {
    const call = await pendingCall('deploy_site');
    const view = await openAlwaysAllow(ADMIN, call.id);
    const res = await interact(submission(ADMIN, view, 'agent', '3600', 'deploys are routine today'));
    expect(res.status).toBe(200);
    expect(res.body ?? {}).not.toHaveProperty('response_action'); // the modal closes

    const decided = await eventually(async () => {
      const c = (await http.get(`/v1/tool-calls/${call.id}`, admin)).body;
      return c.status === 'approved' ? c : undefined;
    });
    expect(decided.decision).toMatchObject({
      outcome: 'approved',
      by: { id: 'bob', via: 'slack' },
      reason: 'deploys are routine today',
    });
    const [grant] = await grantsFrom(call.id);
    expect(grant).toMatchObject({
      scope: 'agent',
      agentId: 'support-bot',
      pattern: 'deploy_site',
      createdBy: { id: 'bob', via: 'slack' },
    });
    const lifetime = Date.parse(grant.expiresAt) - Date.parse(grant.createdAt);
    expect(lifetime).toBe(3600 * 1000);

    // The same agent's next such call, in another conversation, runs at once under the grant.
    expect((await http.post('/v1/conversations', agent, { id: 'parity-after-grant' })).status).toBe(201);
    const next = await http.post('/v1/conversations/parity-after-grant/tool-calls', agent, {
      toolCalls: [{ toolName: 'deploy_site', arguments: { id: 'src_3' } }],
    });
    expect(next.body.toolCalls[0]).toMatchObject({
      status: 'approved',
      policy: { reason: `Allowed by standing grant ${grant.id} (scope agent)` },
    });
  });

  it('makes a grant until revoked when no lifetime is chosen', async () => {
    const call = await pendingCall('rotate_keys');
    const res = await interact(submission(APPROVER, await openAlwaysAllow(APPROVER, call.id), 'conversation', null));
    expect(res.status).toBe(200);
    const [grant] = await eventually(async () => {
      const g = await grantsFrom(call.id);
      return g.length ? g : undefined;
    });
    expect(grant).toMatchObject({ scope: 'conversation', expiresAt: null, createdBy: { id: 'ann' } });
  });

  it('refuses a scope wider than an approver may grant, shows why in the modal, and leaves the call pending', async () => {
    const call = await pendingCall('purge_cache');
    const view = await openAlwaysAllow(APPROVER, call.id);
    const res = await interact(submission(APPROVER, view, 'tenant', '86400'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      response_action: 'errors',
      errors: { scope: expect.stringMatching(/^Tollgate refused: .*conversation/) },
    });
    expect((await http.get(`/v1/tool-calls/${call.id}`, admin)).body.status).toBe('pending');
    expect(await grantsFrom(call.id)).toEqual([]);
    const refused = await http.get(`/v1/audit/events?toolCallId=${call.id}&type=GrantRefused`, admin);
    expect(refused.body.events[0].data).toMatchObject({
      requestedScope: 'tenant',
      refusedBy: 'ann',
      via: 'slack',
    });
  });

  it("refuses a scope wider than the policy's grants even for an admin", async () => {
    const call = await pendingCall('narrow_thing');
    const res = await interact(submission(ADMIN, await openAlwaysAllow(ADMIN, call.id), 'tenant', '86400'));
    expect(res.body).toMatchObject({
      response_action: 'errors',
      errors: { scope: expect.stringMatching(/^Tollgate refused/) },
    });
    expect((await http.get(`/v1/tool-calls/${call.id}`, admin)).body.status).toBe('pending');
  });

  it('asks for a scope and a known lifetime before deciding anything', async () => {
    const call = await pendingCall('purge_cache');
    const view = await openAlwaysAllow(ADMIN, call.id);
    expect((await interact(submission(ADMIN, view, 'galaxy', '3600'))).body).toMatchObject({
      response_action: 'errors',
      errors: { scope: expect.any(String) },
    });
    expect((await interact(submission(ADMIN, view, 'agent', '31337'))).body).toMatchObject({
      response_action: 'errors',
      errors: { expiry: expect.any(String) },
    });
    expect((await http.get(`/v1/tool-calls/${call.id}`, admin)).body.status).toBe('pending');
  });

  it('refuses an unsigned submission with 401 and decides nothing', async () => {
    const call = await pendingCall('purge_cache');
    const view = await openAlwaysAllow(ADMIN, call.id);
    const { body, headers } = slackRequest('not-the-secret', submission(ADMIN, view, 'tenant', null));
    const res = await http.call('POST', '/v1/slack/interactions', { raw: body, headers });
    expect(res.status).toBe(401);
    expect((await http.get(`/v1/tool-calls/${call.id}`, admin)).body.status).toBe('pending');
  });
});
