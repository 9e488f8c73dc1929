/**
 * One person across every channel (issue 23): a Slack user is linked to a Tollgate person (by
 * TOLLGATE_SLACK_APPROVERS `U777=ann`, or by the same verified email) and decides as that person, with the roles
 * of their record. So separation of duties and quorums compare persons whichever channel each decision comes
 * through (the review's reproductions: `ann` refused over REST then approving in Slack; `ann` over REST plus `ann`
 * in Slack making a quorum of two). An unlinked Slack user is refused, told how to link, and the refusal recorded.
 * Slack's Web API is a stand-in.
 */
import { expectIntactChain, eventsOf } from '../support/audit';
import { TollgateGrpc } from '../support/grpc';
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { buttonClick, slackRequest, SlackStandIn, startSlackStandIn } from '../support/slack-stand-in';
import { eventually, until } from '../support/wait';

const SIGNING_SECRET = 'slack-signing-secret-for-persons-0123456789';
/** ann's Slack user, linked to her by the settings. */
const ANN_SLACK = { id: 'U777', name: 'ann.s' };
/** Linked by the settings to `nina`, who never signed in. */
const NINA_SLACK = { id: 'U555', name: 'nina' };
/** Dora's Slack user: linked by her verified email. */
const DORA_SLACK = { id: 'U0DORA', name: 'dora' };
const STRANGER = { id: 'U0STRANGER', name: 'mallory' };
/** Linked by the settings to `ida`, whose roles change between sign-ins. */
const IDA_SLACK = { id: 'U0IDA', name: 'ida' };
const UNCONFIRMED = { id: 'U0UNCONF', name: 'eve' };
/** Linked by the settings to `sam`, whose last sign-in is made older than TOLLGATE_PERSON_MAX_AGE. */
const SAM_SLACK = { id: 'U0SAM', name: 'sam' };
/** Linked by the settings to `zed`, who signs in only to tenant `acme` while Slack acts in `default`. */
const ZED_SLACK = { id: 'U0ZED', name: 'zed' };
/** Linked by the email `pat@example.com`, which later changes hands. */
const PAT_SLACK = { id: 'U0PAT', name: 'pat' };
/** Rita's Slack user: her email is also claimed by persons with no role. */
const RITA_SLACK = { id: 'U0RITA', name: 'rita' };

let slack: SlackStandIn;
let server: TestServer;
let http: ReturnType<typeof client>;
let rpc: TollgateGrpc;
let agent: string;
let ann: string;
let bob: string;
let root: string;

beforeAll(async () => {
  slack = await startSlackStandIn();
  server = await startTestServer({
    outboxPollMs: 100,
    slack: {
      botToken: 'xoxb-persons',
      signingSecret: SIGNING_SECRET,
      channel: '#approvals',
      apiUrl: slack.url,
      tenant: 'default',
      people: {
        [ANN_SLACK.id]: 'ann',
        [NINA_SLACK.id]: 'nina',
        [IDA_SLACK.id]: 'ida',
        [SAM_SLACK.id]: 'sam',
        [ZED_SLACK.id]: 'zed',
      },
      personMaxAgeSeconds: 7 * 86_400,
    },
  });
  http = client(server.url);
  rpc = new TollgateGrpc(server.grpcAddress!);
  agent = await server.token('pay-bot', ['agent']);
  ann = await server.token('ann', ['admin'], { name: 'Ann', email: 'ann@example.com' });
  bob = await server.token('bob', ['admin'], { name: 'Bob' });
  root = await server.token('root', ['admin']);
  const policy = await http.put('/v1/policy', root, {
    rules: [
      { match: 'wire_money', level: 'confirm', selfApproval: false, approvers: ['requester', 'approver', 'admin'] },
      { match: 'close_books', level: 'confirm', quorum: { count: 2, of: ['admin'] } },
      { match: 'admins_only', level: 'confirm', approvers: ['admin'] },
      { match: '*', level: 'confirm', approvers: ['approver', 'admin'] },
    ],
  });
  expect(policy.status).toBe(200);
  // ann and bob have signed in once: their person records hold their roles.
  expect((await http.get('/v1/me', ann)).status).toBe(200);
  expect((await http.get('/v1/me', bob)).status).toBe(200);
});

afterAll(async () => {
  rpc?.close();
  await server?.stop();
  await slack?.close();
});

let n = 0;
async function pending(tool: string, user: string | null = 'carol'): Promise<any> {
  const conv = `persons-${++n}`;
  const started = await http.post('/v1/conversations', agent, { id: conv, ...(user ? { user: { id: user } } : {}) });
  expect(started.status).toBe(201);
  const r = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName: tool, arguments: { amount: 950000 } }],
  });
  expect(r.body.toolCalls[0].status).toBe('pending');
  return r.body.toolCalls[0];
}

/** A click on the message Slack shows about the call (the click names it; its tenant is the message's). */
async function click(user: { id: string; name?: string }, action: string, callId: string): Promise<Reply> {
  const message = await eventually(() => slack.messageAbout(callId), 10_000, `Slack message about ${callId}`);
  const { body, headers } = slackRequest(SIGNING_SECRET, buttonClick(user, action, callId, message));
  return http.call('POST', '/v1/slack/interactions', { raw: body, headers });
}

/** The next ephemeral message Slack was asked to show this user, after the `before` first ones. */
function toldTo(userId: string, before: number, pattern: RegExp): Promise<any> {
  return eventually(
    () =>
      slack
        .callsTo('chat.postEphemeral')
        .filter((c) => c.args.user === userId)
        .slice(before)
        .find((c) => pattern.test(String(c.args.text))),
    10_000,
    `an ephemeral message to ${userId} matching ${pattern}`,
  );
}

const ephemeralsTo = (userId: string) =>
  slack.callsTo('chat.postEphemeral').filter((c) => c.args.user === userId).length;

async function audit(callId: string, type: string): Promise<any[]> {
  return (await http.get(`/v1/audit/events?toolCallId=${callId}&type=${type}`, root)).body.events;
}

describe('persons', () => {
  it('keeps a record of each person from their own requests: id, name, email and roles as last seen; agents are not persons', async () => {
    const [row] = await server.dataSource.query(
      `SELECT name, email, roles FROM persons WHERE tenant_id = 'default' AND id = 'ann'`,
    );
    expect(row).toEqual({ name: 'Ann', email: 'ann@example.com', roles: ['admin'] });
    expect(
      await server.dataSource.query(`SELECT id FROM persons WHERE tenant_id = 'default' AND id = 'pay-bot'`),
    ).toEqual([]);
    // Over gRPC too, and a change of roles is written at once.
    const lee = await server.token('lee', ['auditor'], { tenant: 'acme', name: 'Lee' });
    await rpc.call('GetMe', {}, lee);
    await rpc.call('GetMe', {}, await server.token('lee', ['approver'], { tenant: 'acme', name: 'Lee' }));
    expect(await server.dataSource.query(`SELECT id, name, roles FROM persons WHERE tenant_id = 'acme'`)).toEqual([
      { id: 'lee', name: 'Lee', roles: ['approver'] },
    ]);
  });
});

describe('separation of duties across channels', () => {
  it('refuses ann in Slack as over REST when it is her own call (self_approval), recorded as her', async () => {
    const call = await pending('wire_money', 'ann');
    const rest = await http.post(`/v1/tool-calls/${call.id}/decision`, ann, { decision: 'approve' });
    expect({ status: rest.status, code: rest.body.code }).toEqual({ status: 403, code: 'self_approval' });

    const before = ephemeralsTo(ANN_SLACK.id);
    expect((await click(ANN_SLACK, 'tollgate_approve', call.id)).status).toBe(200);
    await toldTo(ANN_SLACK.id, before, /may not approve/);
    expect((await http.get(`/v1/tool-calls/${call.id}`, root)).body.status).toBe('pending');
    const refusals = await audit(call.id, 'DecisionRefused');
    expect(refusals.map((e) => [e.actor.id, e.actor.via, e.actor.channelUser ?? null, e.data.code])).toEqual([
      ['ann', 'api', null, 'self_approval'],
      ['ann', 'slack', ANN_SLACK.id, 'self_approval'],
    ]);
  });
});

describe('quorums across channels', () => {
  it('counts ann once whether she approves in Slack or over REST; a second admin completes it', async () => {
    const call = await pending('close_books');
    expect((await click(ANN_SLACK, 'tollgate_approve', call.id)).status).toBe(200);
    const [recorded] = await eventually(async () => {
      const e = await audit(call.id, 'ToolCallApprovalRecorded');
      return e.length ? e : undefined;
    });
    expect(recorded.actor).toMatchObject({ id: 'ann', via: 'slack', channelUser: ANN_SLACK.id });

    const rest = await http.post(`/v1/tool-calls/${call.id}/decision`, ann, { decision: 'approve' });
    expect(rest.status).toBe(200);
    expect(rest.body.status).toBe('pending');
    expect(rest.body.approval.quorum.approvedBy).toMatchObject([{ id: 'ann', via: 'slack' }]);

    const second = await http.post(`/v1/tool-calls/${call.id}/decision`, bob, { decision: 'approve' });
    expect(second.body.status).toBe('approved');
  });

  it('counts ann once over REST and gRPC', async () => {
    const call = await pending('close_books');
    await http.post(`/v1/tool-calls/${call.id}/decision`, ann, { decision: 'approve' });
    const again = await rpc.call('DecideToolCall', { id: call.id, decision: 'DECISION_KIND_APPROVE' }, ann);
    expect(again.status).toBe('TOOL_CALL_STATUS_PENDING');
    const got = (await http.get(`/v1/tool-calls/${call.id}`, root)).body;
    expect(got.status).toBe('pending');
    expect(got.approval.quorum.approvedBy.map((a: any) => a.id)).toEqual(['ann']);
  });
});

describe('deciding in Slack as the linked person', () => {
  it("decides as ann with her record's roles, recording her Slack user", async () => {
    const call = await pending('delete_source');
    expect((await click(ANN_SLACK, 'tollgate_approve', call.id)).status).toBe(200);
    const approved = await eventually(async () => {
      const c = (await http.get(`/v1/tool-calls/${call.id}`, root)).body;
      return c.status === 'approved' ? c : undefined;
    });
    expect(approved.decision.by).toMatchObject({ id: 'ann', name: 'Ann', via: 'slack' });
    const [event] = await audit(call.id, 'ToolCallApproved');
    expect(event.actor).toMatchObject({ id: 'ann', kind: 'person', via: 'slack', channelUser: ANN_SLACK.id });
    expect(event.actor.roles).toEqual(['admin']);
    const links = await server.dataSource.query(
      `SELECT person_id, linked_by FROM person_identities WHERE tenant_id = 'default' AND channel = 'slack' AND channel_user = $1`,
      [ANN_SLACK.id],
    );
    expect(links).toEqual([{ person_id: 'ann', linked_by: 'config' }]);
  });

  it('takes the roles of her latest sign-in, not any Slack setting: an approver now, she may not decide a call for admins', async () => {
    const ida = await server.token('ida', ['admin'], { name: 'Ida' });
    expect((await http.get('/v1/me', ida)).status).toBe(200);
    expect((await http.get('/v1/me', await server.token('ida', ['approver'], { name: 'Ida' }))).status).toBe(200);
    const call = await pending('admins_only');
    const before = ephemeralsTo(IDA_SLACK.id);
    expect((await click(IDA_SLACK, 'tollgate_approve', call.id)).status).toBe(200);
    await toldTo(IDA_SLACK.id, before, /needs one of: admin/);
    expect((await http.get(`/v1/tool-calls/${call.id}`, root)).body.status).toBe('pending');
  });

  it('refuses a Slack user linked to a person who never signed in, telling them to sign in once', async () => {
    const call = await pending('delete_source');
    const before = ephemeralsTo(NINA_SLACK.id);
    await click(NINA_SLACK, 'tollgate_approve', call.id);
    await toldTo(NINA_SLACK.id, before, /has not signed in to Tollgate in tenant `default` yet/);
    const [refused] = await eventually(async () => {
      const e = await audit(call.id, 'DecisionRefused');
      return e.length ? e : undefined;
    });
    expect(refused.data).toMatchObject({ code: 'unlinked_channel_user', channelUser: NINA_SLACK.id, personId: 'nina' });
  });

  it('names the tenant it looked in when the person signed in to another one (single sign-on in `acme`)', async () => {
    const zed = await server.token('zed', ['admin'], { tenant: 'acme', name: 'Zed' });
    expect((await http.get('/v1/me', zed)).status).toBe(200);
    const call = await pending('delete_source');
    const before = ephemeralsTo(ZED_SLACK.id);
    await click(ZED_SLACK, 'tollgate_approve', call.id);
    const told = await toldTo(ZED_SLACK.id, before, /not signed in/);
    expect(told.args.text).toContain('linked to "zed", who has not signed in to Tollgate in tenant `default` yet');
    expect((await http.get(`/v1/tool-calls/${call.id}`, root)).body.status).toBe('pending');
  });
});

/** Makes a person's last sign-in older than TOLLGATE_PERSON_MAX_AGE (a week here), as if a week and a day passed. */
async function ageSignIn(id: string): Promise<void> {
  await server.dataSource.query(
    `UPDATE persons SET last_seen_at = now() - interval '8 days' WHERE tenant_id = 'default' AND id = $1`,
    [id],
  );
}

describe('a linked person whose last sign-in is older than TOLLGATE_PERSON_MAX_AGE', () => {
  it('is refused in Slack, told to sign in again, recorded as DecisionRefused stale_person; a new sign-in lets them decide', async () => {
    const sam = await server.token('sam', ['admin'], { name: 'Sam' });
    expect((await http.get('/v1/me', sam)).status).toBe(200);
    await ageSignIn('sam');
    const call = await pending('admins_only');
    const before = ephemeralsTo(SAM_SLACK.id);
    await click(SAM_SLACK, 'tollgate_approve', call.id);
    const told = await toldTo(SAM_SLACK.id, before, /sign-in is older than 7 days/);
    expect(told.args.text.length).toBeLessThanOrEqual(150); // what a modal shows of it
    expect(told.args.text).toMatch(
      /Sign in again \(web inbox, `tollgate login`, or any request with your token\), then retry\.$/,
    );
    const [refused] = await eventually(async () => {
      const e = await audit(call.id, 'DecisionRefused');
      return e.length ? e : undefined;
    });
    expect(refused).toMatchObject({
      actor: { id: `slack:${SAM_SLACK.id}`, via: 'slack', channelUser: SAM_SLACK.id },
      data: { decision: 'approve', code: 'stale_person', personId: 'sam', channelUser: SAM_SLACK.id },
    });
    expect((await http.get(`/v1/tool-calls/${call.id}`, root)).body.status).toBe('pending');
    expectIntactChain(await eventsOf(server.dataSource, 'default'));

    // Signing in again refreshes the record. (This instance remembers its last write of sam for 5 minutes; a
    // changed claim is written at once, as any request a week later would be.)
    expect((await http.get('/v1/me', await server.token('sam', ['admin'], { name: 'Sam S.' }))).status).toBe(200);
    await click(SAM_SLACK, 'tollgate_approve', call.id);
    const approved = await eventually(async () => {
      const c = (await http.get(`/v1/tool-calls/${call.id}`, root)).body;
      return c.status === 'approved' ? c : undefined;
    });
    expect(approved.decision.by).toMatchObject({ id: 'sam', via: 'slack' });
  });
});

describe('an unlinked Slack user', () => {
  it('is refused, told how to link, and the refusal is recorded as DecisionRefused unlinked_channel_user in the chain', async () => {
    const call = await pending('delete_source');
    const before = ephemeralsTo(STRANGER.id);
    expect((await click(STRANGER, 'tollgate_approve', call.id)).status).toBe(200);
    const told = await toldTo(STRANGER.id, before, /not linked to a Tollgate person/);
    expect(told.args.text).toMatch(/sign in to Tollgate once with the same email/i);
    expect(told.args.text).toContain(`${STRANGER.id}=<your Tollgate person id>`);
    const [refused] = await eventually(async () => {
      const e = await audit(call.id, 'DecisionRefused');
      return e.length ? e : undefined;
    });
    expect(refused).toMatchObject({
      actor: { id: `slack:${STRANGER.id}`, via: 'slack', channelUser: STRANGER.id },
      conversationId: expect.any(String),
      toolName: 'delete_source',
      data: {
        decision: 'approve',
        code: 'unlinked_channel_user',
        refusedBy: `slack:${STRANGER.id}`,
        via: 'slack',
        channelUser: STRANGER.id,
      },
    });
    expect((await http.get(`/v1/tool-calls/${call.id}`, root)).body.status).toBe('pending');
    expectIntactChain(await eventsOf(server.dataSource, 'default'));
  });

  it('opens no reject modal', async () => {
    const call = await pending('delete_source');
    const opened = slack.callsTo('views.open').length;
    const before = ephemeralsTo(STRANGER.id);
    await click(STRANGER, 'tollgate_reject', call.id);
    await toldTo(STRANGER.id, before, /not linked/);
    expect(slack.callsTo('views.open').length).toBe(opened);
  });
});

describe('linking by verified email', () => {
  it("links a Slack user whose confirmed email is a person's (any case), stores the link, and decides as them", async () => {
    const dora = await server.token('dora', ['approver'], { name: 'Dora', email: 'Dora@Example.com' });
    expect((await http.get('/v1/me', dora)).status).toBe(200);
    slack.addUser(DORA_SLACK.id, { email: 'dora@example.COM' });
    const call = await pending('delete_source');
    await click(DORA_SLACK, 'tollgate_approve', call.id);
    const approved = await eventually(async () => {
      const c = (await http.get(`/v1/tool-calls/${call.id}`, root)).body;
      return c.status === 'approved' ? c : undefined;
    });
    expect(approved.decision.by).toMatchObject({ id: 'dora', via: 'slack' });
    expect(
      await server.dataSource.query(
        `SELECT person_id, linked_by FROM person_identities WHERE channel = 'slack' AND channel_user = $1`,
        [DORA_SLACK.id],
      ),
    ).toEqual([{ person_id: 'dora', linked_by: 'email' }]);
    // The stored link holds on the next click once Slack's email still matches: asked again, not stored again.
    const asked = slack.callsTo('users.info').filter((c) => c.args.user === DORA_SLACK.id).length;
    const next = await pending('delete_source');
    await click(DORA_SLACK, 'tollgate_reject', next.id);
    await until(() =>
      slack.callsTo('views.open').some((c) => JSON.parse(c.args.view.private_metadata).toolCallId === next.id),
    );
    expect(slack.callsTo('users.info').filter((c) => c.args.user === DORA_SLACK.id).length).toBe(asked + 1);
  });

  it("re-checks an email link on each use: when the person's email changes it no longer holds, and it follows the address's new owner", async () => {
    const pat = await server.token('pat', ['admin'], { name: 'Pat', email: 'pat@example.com' });
    expect((await http.get('/v1/me', pat)).status).toBe(200);
    slack.addUser(PAT_SLACK.id, { email: 'pat@example.com' });
    const first = await pending('delete_source');
    await click(PAT_SLACK, 'tollgate_approve', first.id);
    await until(async () => (await http.get(`/v1/tool-calls/${first.id}`, root)).body.status === 'approved');

    // pat's email changes at the provider; the Slack account still says pat@example.com.
    const moved = await server.token('pat', ['admin'], { name: 'Pat', email: 'pat@elsewhere.example' });
    expect((await http.get('/v1/me', moved)).status).toBe(200);
    const second = await pending('delete_source');
    const before = ephemeralsTo(PAT_SLACK.id);
    await click(PAT_SLACK, 'tollgate_approve', second.id);
    const told = await toldTo(PAT_SLACK.id, before, /not linked to a Tollgate person/);
    expect(told.args.text).toContain('its link to "pat" by email no longer holds');
    expect((await http.get(`/v1/tool-calls/${second.id}`, root)).body.status).toBe('pending');

    // The address's real owner signs in: the Slack user now decides as them, and the link says so.
    const quinn = await server.token('quinn', ['approver'], { name: 'Quinn', email: 'Pat@Example.com' });
    expect((await http.get('/v1/me', quinn)).status).toBe(200);
    await click(PAT_SLACK, 'tollgate_approve', second.id);
    const approved = await eventually(async () => {
      const c = (await http.get(`/v1/tool-calls/${second.id}`, root)).body;
      return c.status === 'approved' ? c : undefined;
    });
    expect(approved.decision.by).toMatchObject({ id: 'quinn', via: 'slack' });
    expect(
      await server.dataSource.query(
        `SELECT person_id, linked_by FROM person_identities WHERE channel = 'slack' AND channel_user = $1`,
        [PAT_SLACK.id],
      ),
    ).toEqual([{ person_id: 'quinn', linked_by: 'email' }]);
  });

  it('leaves persons with no role out of the email match: they neither capture nor blur the link', async () => {
    const rita = await server.token('rita', ['approver'], { name: 'Rita', email: 'rita@example.com' });
    expect((await http.get('/v1/me', rita)).status).toBe(200);
    // Two provider tokens mapping to no role claim rita's address (ids sorting before hers).
    for (const id of ['aaa-squat-1', 'aaa-squat-2'])
      expect((await http.get('/v1/me', await server.token(id, [], { email: 'RITA@example.com' }))).status).toBe(200);
    expect(
      await server.dataSource.query(
        `SELECT id, roles FROM persons WHERE tenant_id = 'default' AND lower(email) = 'rita@example.com' ORDER BY id`,
      ),
    ).toEqual([
      { id: 'aaa-squat-1', roles: [] },
      { id: 'aaa-squat-2', roles: [] },
      { id: 'rita', roles: ['approver'] },
    ]);
    slack.addUser(RITA_SLACK.id, { email: 'rita@example.com' });
    const call = await pending('delete_source');
    await click(RITA_SLACK, 'tollgate_approve', call.id);
    const approved = await eventually(async () => {
      const c = (await http.get(`/v1/tool-calls/${call.id}`, root)).body;
      return c.status === 'approved' ? c : undefined;
    });
    expect(approved.decision.by).toMatchObject({ id: 'rita', via: 'slack' });
  });

  it('does not link by an email Slack has not confirmed', async () => {
    const eve = await server.token('eve', ['approver'], { email: 'eve@example.com' });
    expect((await http.get('/v1/me', eve)).status).toBe(200);
    slack.addUser(UNCONFIRMED.id, { email: 'eve@example.com', emailConfirmed: false });
    const call = await pending('delete_source');
    const before = ephemeralsTo(UNCONFIRMED.id);
    await click(UNCONFIRMED, 'tollgate_approve', call.id);
    await toldTo(UNCONFIRMED.id, before, /not linked to a Tollgate person/);
    expect((await http.get(`/v1/tool-calls/${call.id}`, root)).body.status).toBe('pending');
  });
});

describe('answering a question in Slack', () => {
  async function question(): Promise<string> {
    const conv = `persons-q-${++n}`;
    expect((await http.post('/v1/conversations', agent, { id: conv })).status).toBe(201);
    const asked = await http.post(`/v1/conversations/${conv}/questions`, agent, {
      text: 'Which region?',
      choices: ['EU', 'US'],
    });
    expect(asked.status).toBe(201);
    return asked.body.id;
  }
  const answerClick = async (user: { id: string; name?: string }, q: string) => {
    const message = await eventually(() => slack.messageAbout(q), 10_000, `Slack message about ${q}`);
    const payload = {
      ...buttonClick(user, 'tollgate_answer:1', q, message),
      actions: [{ action_id: 'tollgate_answer:1', value: JSON.stringify({ q, a: 'US' }), type: 'button' }],
    };
    const { body, headers } = slackRequest(SIGNING_SECRET, payload);
    return http.call('POST', '/v1/slack/interactions', { raw: body, headers });
  };

  it('answers as the linked person', async () => {
    const q = await question();
    expect((await answerClick(ANN_SLACK, q)).status).toBe(200);
    const answered = (await http.get(`/v1/questions/${q}?wait=10`, agent)).body;
    expect(answered).toMatchObject({ status: 'answered', answer: { text: 'US', by: { id: 'ann', via: 'slack' } } });
    const [event] = (
      await http.get(`/v1/audit/events?conversationId=${answered.conversationId}&type=QuestionAnswered`, root)
    ).body.events;
    expect(event.actor).toMatchObject({ id: 'ann', kind: 'person', via: 'slack', channelUser: ANN_SLACK.id });
  });

  it('refuses a linked person whose sign-in is too old, telling them to sign in again', async () => {
    const sam = await server.token('sam', ['admin'], { name: 'Sam Q.' });
    expect((await http.get('/v1/me', sam)).status).toBe(200);
    await ageSignIn('sam');
    const q = await question();
    const before = ephemeralsTo(SAM_SLACK.id);
    expect((await answerClick(SAM_SLACK, q)).status).toBe(200);
    await toldTo(SAM_SLACK.id, before, /sign-in is older than 7 days/);
    expect((await http.get(`/v1/questions/${q}`, agent)).body.status).toBe('pending');
  });

  it('refuses an unlinked Slack user, telling them how to link', async () => {
    const q = await question();
    const before = ephemeralsTo(STRANGER.id);
    expect((await answerClick(STRANGER, q)).status).toBe(200);
    await toldTo(STRANGER.id, before, /not linked to a Tollgate person/);
    expect((await http.get(`/v1/questions/${q}`, agent)).body.status).toBe('pending');
  });
});
