/**
 * Separation of duties (`selfApproval: false`) and quorums, end to end: REST, gRPC, the CLI and Slack refuse
 * the requester and the agent's owner alike, and record it; a quorum's calls wait for distinct approvals
 * ("1 of 2" on every channel), the agent's wait ends only at the last one, and racing approvals on two
 * instances give exactly one outcome. The audit chain stays intact throughout.
 */
import { expectIntactChain, eventsOf } from '../support/audit';
import { freshDatabase, TestDatabase } from '../support/database';
import { TollgateGrpc } from '../support/grpc';
import { client } from '../support/http';
import { cliEnv, runCli } from '../support/pty';
import { startTestServer, TestServer } from '../support/server';
import { buttonClick, slackRequest, SlackStandIn, startSlackStandIn } from '../support/slack-stand-in';
import { eventually } from '../support/wait';

const SIGNING_SECRET = 'slack-signing-secret-for-governance-0123456789';
const RITA_SLACK = { id: 'U0RITA', name: 'rita' };

const POLICY = {
  rules: [
    { match: 'wire_money', level: 'confirm', selfApproval: false, approvers: ['requester', 'approver', 'admin'] },
    { match: 'pay_invoice', level: 'confirm', quorum: 2 },
    { match: 'close_books', level: 'confirm', quorum: { count: 2, of: ['admin'] } },
    {
      match: 'night_deploy',
      level: 'confirm',
      approvers: ['approver'],
      timeoutSeconds: 120,
      escalate: [{ after: '1s', approvers: ['admin'], notify: ['slack'] }],
      remindBefore: [119],
    },
  ],
};

let db: TestDatabase;
let slack: SlackStandIn;
let a: TestServer;
let b: TestServer;
let apiA: ReturnType<typeof client>;
let apiB: ReturnType<typeof client>;
let agent: string;
let rita: string;
let owen: string;
let alice: string;
let bob: string;
let carol: string;
let root: string;

beforeAll(async () => {
  db = await freshDatabase();
  slack = await startSlackStandIn();
  const slackConfig = {
    botToken: 'xoxb-governance',
    signingSecret: SIGNING_SECRET,
    channel: '#approvals',
    apiUrl: slack.url,
    tenant: 'default',
    people: { [RITA_SLACK.id]: 'rita' },
  };
  a = await startTestServer({ instanceId: 'a', outboxPollMs: 100, slack: slackConfig }, { db });
  // Two instances share the database only on PostgreSQL; on the embedded database B is A.
  b = process.env.DATABASE_URL ? await startTestServer({ instanceId: 'b' }, { db }) : a;
  apiA = client(a.url);
  apiB = client(b.url);
  agent = await a.token('pay-bot', ['agent'], { owner: 'owen' });
  rita = await a.token('rita', ['approver'], { name: 'Rita' });
  owen = await a.token('owen', ['admin'], { name: 'Owen' });
  alice = await a.token('alice', ['approver'], { name: 'Alice' });
  bob = await a.token('bob', ['approver'], { name: 'Bob' });
  carol = await a.token('carol', ['admin'], { name: 'Carol' });
  root = await a.token('root', ['admin']);
  expect((await apiA.put('/v1/policy', root, POLICY)).status).toBe(200);
  // Rita's Slack user acts as the person rita, with the roles of her own sign-in.
  expect((await apiA.get('/v1/me', rita)).status).toBe(200);
});

afterAll(async () => {
  if (b && b !== a) await b.stop();
  await a?.stop();
  await slack?.close();
  await db?.drop();
});

let n = 0;
/** A pending call of `tool` in a fresh conversation whose user is Rita (the person her Slack user is linked to). */
async function pending(tool: string, args: Record<string, unknown> = { amount: 900 }): Promise<any> {
  const conv = `gov-${++n}`;
  expect((await apiA.post('/v1/conversations', agent, { id: conv, user: { id: 'rita', name: 'Rita' } })).status).toBe(
    201,
  );
  const r = await apiA.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName: tool, arguments: args }],
  });
  expect(r.status).toBe(201);
  expect(r.body.toolCalls[0].status).toBe('pending');
  return r.body.toolCalls[0];
}

const decide = (
  api: ReturnType<typeof client>,
  id: string,
  token: string,
  body: Record<string, unknown> = { decision: 'approve' },
) => api.post(`/v1/tool-calls/${id}/decision`, token, body);

describe('separation of duties', () => {
  it('shows selfApproval false on the held call', async () => {
    const call = await pending('wire_money');
    expect(call.approval).toMatchObject({ approvers: ['requester', 'approver', 'admin'], selfApproval: false });
  });

  it("refuses the conversation's user over REST with 403 self_approval, records DecisionRefused, and another approver decides", async () => {
    const call = await pending('wire_money');
    const refused = await decide(apiA, call.id, rita);
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 'self_approval' });
    expect(refused.body.detail).toMatch(/conversation's user may not approve/);
    expect((await apiA.get(`/v1/tool-calls/${call.id}`, root)).body.status).toBe('pending');

    const audit = await apiA.get(`/v1/audit/events?toolCallId=${call.id}`, root);
    const refusal = audit.body.events.find((e: any) => e.type === 'DecisionRefused');
    expect(refusal).toMatchObject({
      actor: { id: 'rita' },
      data: { code: 'self_approval', refusedBy: 'rita', decision: 'approve' },
    });

    const ok = await decide(apiB, call.id, alice);
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('approved');
  });

  it("refuses the agent's owner (the agent token's owner claim) even as an admin, and an always_allow too", async () => {
    const call = await pending('wire_money');
    const refused = await decide(apiA, call.id, owen, { decision: 'always_allow', scope: 'tenant' });
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 'self_approval' });
    expect(refused.body.detail).toMatch(/agent's owner/);
  });

  it('lets the requester reject their own call', async () => {
    const call = await pending('wire_money');
    const r = await decide(apiA, call.id, rita, { decision: 'reject', reason: 'I did not ask for this' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('rejected');
  });

  it('refuses over gRPC with PERMISSION_DENIED and tollgate-code self_approval', async () => {
    const call = await pending('wire_money');
    const rpc = new TollgateGrpc(a.grpcAddress!);
    try {
      const f = await rpc.failure('DecideToolCall', { id: call.id, decision: 'DECISION_KIND_APPROVE' }, rita);
      expect(f).toMatchObject({ code: 7, tollgateCode: 'self_approval' });
    } finally {
      rpc.client.close();
    }
  });

  it('refuses on the CLI: exit 1 and one line naming self_approval', async () => {
    const call = await pending('wire_money');
    const r = await runCli(['approve', call.id], cliEnv({ url: a.url, token: rita }));
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^self_approval: /);
  });

  it('refuses in Slack: the requester clicking Approve is told why, and the call stays pending', async () => {
    const call = await pending('wire_money');
    const message = await eventually(() => slack.messageAbout(call.id), 10_000, 'Slack message');
    const { body, headers } = slackRequest(
      SIGNING_SECRET,
      buttonClick(RITA_SLACK, 'tollgate_approve', call.id, message),
    );
    const res = await apiA.call('POST', '/v1/slack/interactions', { raw: body, headers });
    expect(res.status).toBe(200);
    const told = await eventually(
      () =>
        slack
          .callsTo('chat.postEphemeral')
          .find((c) => String(c.args.user) === RITA_SLACK.id && /may not approve/.test(String(c.args.text))),
      10_000,
      'an ephemeral refusal for Rita',
    );
    expect(told).toBeDefined();
    expect((await apiA.get(`/v1/tool-calls/${call.id}`, root)).body.status).toBe('pending');
  });
});

describe('quorum', () => {
  it('records the first approval ("1 of 2"), keeps the agent waiting, and approves at the second distinct person', async () => {
    const call = await pending('pay_invoice');
    expect(call.approval.quorum).toEqual({ needed: 2, approvedBy: [] });
    const wait = apiA.get(`/v1/tool-calls/${call.id}?wait=30`, agent);

    const first = await decide(apiA, call.id, alice, { decision: 'approve', reason: 'invoice checked' });
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('pending');
    expect(first.body.approval.quorum).toMatchObject({
      needed: 2,
      approvedBy: [{ id: 'alice', name: 'Alice', via: 'api' }],
    });
    // The same person again counts once: unchanged, still pending.
    const again = await decide(apiB, call.id, alice, { decision: 'approve', reason: 'invoice checked' });
    expect(again.status).toBe(200);
    expect(again.body.approval.quorum.approvedBy).toHaveLength(1);

    const inbox = await apiA.get('/v1/approvals', bob);
    expect(inbox.body.items.find((i: any) => i.id === call.id).approval.quorum.approvedBy).toHaveLength(1);

    const second = await decide(apiB, call.id, bob);
    expect(second.body).toMatchObject({ status: 'approved', decision: { outcome: 'approved', by: { id: 'bob' } } });
    expect((await wait).body.status).toBe('approved');

    const types = (await apiA.get(`/v1/audit/events?toolCallId=${call.id}`, root)).body.events.map((e: any) => e.type);
    expect(types.filter((t: string) => t.startsWith('ToolCallApprov'))).toEqual([
      'ToolCallApprovalRecorded',
      'ToolCallApproved',
    ]);
  });

  it('rejects at the first rejection', async () => {
    const call = await pending('pay_invoice');
    await decide(apiA, call.id, alice);
    const r = await decide(apiB, call.id, bob, { decision: 'reject', reason: 'duplicate invoice' });
    expect(r.body.status).toBe('rejected');
  });

  it('counts only the roles in `of`: an approver may not approve close_books, two admins may', async () => {
    const call = await pending('close_books');
    const refused = await decide(apiA, call.id, alice);
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 'forbidden' });
    expect((await decide(apiA, call.id, carol)).body.status).toBe('pending');
    expect((await decide(apiB, call.id, root)).body.status).toBe('approved');
  });

  it('refuses an approval that edits the arguments differently from the first (409 quorum_arguments_mismatch)', async () => {
    const call = await pending('pay_invoice', { amount: 900 });
    await decide(apiA, call.id, alice, { decision: 'approve', arguments: { amount: 500 } });
    const r = await decide(apiA, call.id, bob, { decision: 'approve', arguments: { amount: 400 } });
    expect({ status: r.status, code: r.body.code }).toEqual({ status: 409, code: 'quorum_arguments_mismatch' });
    const ok = await decide(apiA, call.id, carol);
    expect(ok.body.status).toBe('approved');
    const claim = await apiA.post(`/v1/tool-calls/${ok.body.id}/execution`, agent, {});
    expect(claim.body.arguments).toEqual({ amount: 500 });
  });

  it('shows "1 of 2" over gRPC', async () => {
    const call = await pending('pay_invoice');
    await decide(apiA, call.id, alice);
    const rpc = new TollgateGrpc(a.grpcAddress!);
    try {
      const got = await rpc.call('GetToolCall', { id: call.id }, bob);
      expect(got.approval.quorum).toMatchObject({ needed: 2, approvedBy: [{ id: 'alice' }] });
    } finally {
      rpc.client.close();
    }
  });

  it('updates the Slack message to "1 of 2" after the first approval', async () => {
    const call = await pending('pay_invoice');
    await eventually(
      () => slack.callsTo('chat.postMessage').find((c) => String(c.args.text).includes(call.id)),
      10_000,
      'the Slack request',
    );
    await decide(apiA, call.id, alice);
    const updated = await eventually(
      () =>
        slack
          .callsTo('chat.update')
          .find(
            (c) =>
              JSON.stringify(c.args.blocks ?? '').includes('1 of 2') && JSON.stringify(c.args.blocks).includes(call.id),
          ),
      10_000,
      'a Slack update saying 1 of 2',
    );
    expect(JSON.stringify(updated.args.blocks)).toContain('Alice');
  });

  it('racing approvals by two people on two instances give one ApprovalRecorded and one Approved, never two approvals of one person', async () => {
    for (let i = 0; i < 5; i++) {
      const call = await pending('pay_invoice');
      const [x, y] = await Promise.all([decide(apiA, call.id, alice), decide(apiB, call.id, bob)]);
      expect([x.status, y.status]).toEqual([200, 200]);
      const final = (await apiA.get(`/v1/tool-calls/${call.id}`, root)).body;
      expect(final.status).toBe('approved');
      const types = (await apiA.get(`/v1/audit/events?toolCallId=${call.id}`, root)).body.events.map(
        (e: any) => e.type,
      );
      expect(types.filter((t: string) => t === 'ToolCallApprovalRecorded')).toHaveLength(1);
      expect(types.filter((t: string) => t === 'ToolCallApproved')).toHaveLength(1);
    }
  });

  it('racing approvals by the same person on two instances count once', async () => {
    const call = await pending('pay_invoice');
    await Promise.all([decide(apiA, call.id, alice), decide(apiB, call.id, alice)]);
    const final = (await apiA.get(`/v1/tool-calls/${call.id}`, root)).body;
    expect(final.status).toBe('pending');
    expect(final.approval.quorum.approvedBy).toHaveLength(1);
  });

  it('keeps the audit chain intact', async () => {
    expectIntactChain(await eventsOf(a.dataSource, 'default'));
  });
});

describe('quorum on the CLI', () => {
  it('tollgate approve says how far the quorum has got, and the second approval approves', async () => {
    const call = await pending('pay_invoice');
    const first = await runCli(['approve', call.id], cliEnv({ url: a.url, token: alice }));
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).toBe(`${call.id} pay_invoice: pending, 1 of 2 approvals (Alice)`);
    const second = await runCli(['approve', call.id], cliEnv({ url: a.url, token: bob }));
    expect(second.stdout.trim()).toMatch(new RegExp(`^${call.id} pay_invoice: approved by Bob via cli`));
  });
});

describe('deciding a whole step at once', () => {
  /** A step of three held calls in a fresh conversation: two plain, one under separation of duties. */
  async function step(): Promise<{ conv: string; ids: string[] }> {
    const conv = `gov-step-${++n}`;
    expect((await apiA.post('/v1/conversations', agent, { id: conv, user: { id: 'rita', name: 'Rita' } })).status).toBe(
      201,
    );
    const r = await apiA.post(`/v1/conversations/${conv}/tool-calls`, agent, {
      toolCalls: [
        { toolName: 'send_email', arguments: { to: 'a@example.com' } },
        { toolName: 'send_email', arguments: { to: 'b@example.com' } },
        { toolName: 'wire_money', arguments: { amount: 5 } },
      ],
    });
    expect(r.body.toolCalls.map((c: any) => c.status)).toEqual(['pending', 'pending', 'pending']);
    return { conv, ids: r.body.toolCalls.map((c: any) => c.id) };
  }

  it('rejects every pending call of the step, each with its own event and the same reason', async () => {
    const { conv, ids } = await step();
    const r = await apiA.post(`/v1/conversations/${conv}/decisions`, alice, {
      decision: 'reject',
      reason: 'wrong customer',
    });
    expect(r.status).toBe(200);
    expect(r.body.refused).toEqual([]);
    expect(r.body.toolCalls.map((c: any) => [c.id, c.status, c.decision.reason]).sort()).toEqual(
      ids.map((id) => [id, 'rejected', 'wrong customer']).sort(),
    );
    const events = (await apiA.get(`/v1/audit/events?conversationId=${conv}&type=ToolCallRejected`, root)).body.events;
    expect(events.map((e: any) => e.toolCallId).sort()).toEqual([...ids].sort());
  });

  it('approves what the person may approve and lists the rest as refused, with the code deciding each alone would give', async () => {
    const { conv, ids } = await step();
    const r = await apiB.post(
      `/v1/conversations/${conv}/decisions`,
      rita,
      { decision: 'approve' },
      { 'X-Tollgate-Channel': 'web' },
    );
    expect(r.status).toBe(200);
    expect(r.body.toolCalls.map((c: any) => [c.id, c.status, c.decision.by.via]).sort()).toEqual(
      [
        [ids[0], 'approved', 'web'],
        [ids[1], 'approved', 'web'],
      ].sort(),
    );
    expect(r.body.refused).toEqual([
      { id: ids[2], code: 'self_approval', detail: expect.stringMatching(/may not approve/) },
    ]);
    expect((await apiA.get(`/v1/tool-calls/${ids[2]}`, root)).body.status).toBe('pending');
  });

  it('decides only the named calls, and refuses ids of other conversations with 400', async () => {
    const { conv, ids } = await step();
    const r = await apiA.post(`/v1/conversations/${conv}/decisions`, alice, {
      decision: 'approve',
      toolCallIds: [ids[1]],
    });
    expect(r.body.toolCalls.map((c: any) => c.id)).toEqual([ids[1]]);
    expect((await apiA.get(`/v1/tool-calls/${ids[0]}`, root)).body.status).toBe('pending');
    const bad = await apiA.post(`/v1/conversations/${conv}/decisions`, alice, {
      decision: 'approve',
      toolCallIds: ['tc_elsewhere'],
    });
    expect({ status: bad.status, code: bad.body.code }).toEqual({ status: 400, code: 'validation_failed' });
  });

  it('answers 404 to another tenant, 403 to an agent, and 400 to always_allow (decided per call only)', async () => {
    const { conv } = await step();
    const stranger = await a.token('eve', ['admin'], { tenant: 'other' });
    expect((await apiA.post(`/v1/conversations/${conv}/decisions`, stranger, { decision: 'approve' })).status).toBe(
      404,
    );
    const byAgent = await apiA.post(`/v1/conversations/${conv}/decisions`, agent, { decision: 'approve' });
    expect({ status: byAgent.status, code: byAgent.body.code }).toEqual({ status: 403, code: 'forbidden' });
    const always = await apiA.post(`/v1/conversations/${conv}/decisions`, alice, { decision: 'always_allow' });
    expect({ status: always.status, code: always.body.code }).toEqual({ status: 400, code: 'validation_failed' });
  });

  it('a step decision racing a single decision of one of its calls: each call is decided once', async () => {
    const { conv, ids } = await step();
    const [whole, one] = await Promise.all([
      apiA.post(`/v1/conversations/${conv}/decisions`, alice, { decision: 'reject', reason: 'batch' }),
      decide(apiB, ids[0], bob),
    ]);
    expect(whole.status).toBe(200);
    const statuses = await Promise.all(
      ids.map(async (id) => (await apiA.get(`/v1/tool-calls/${id}`, root)).body.status),
    );
    expect(statuses[1]).toBe('rejected');
    const decisions = (await apiA.get(`/v1/audit/events?conversationId=${conv}`, root)).body.events.filter(
      (e: any) => e.toolCallId === ids[0] && (e.type === 'ToolCallApproved' || e.type === 'ToolCallRejected'),
    );
    expect(decisions).toHaveLength(1);
    expect(statuses[0]).toBe(decisions[0].type === 'ToolCallApproved' ? 'approved' : 'rejected');
    if (one.status !== 200) expect(one.body.code).toBe('already_decided');
  });
});

describe('escalation, reminders and deadlines', () => {
  it("escalates after the step's wait: an admin may then decide, Slack is told in the thread, and a reminder is recorded", async () => {
    const call = await pending('night_deploy');
    expect(call.approval.approvers).toEqual(['approver']);
    const early = await decide(apiA, call.id, carol);
    expect({ status: early.status, code: early.body.code }).toEqual({ status: 403, code: 'forbidden' });

    const escalated = await eventually(
      async () =>
        (await apiA.get(`/v1/audit/events?toolCallId=${call.id}`, root)).body.events.find(
          (e: any) => e.type === 'ToolCallEscalated',
        ),
      20_000,
      'ToolCallEscalated',
    );
    expect(escalated.data).toMatchObject({
      step: 1,
      added: ['admin'],
      approvers: ['approver', 'admin'],
      notify: ['slack'],
    });
    expect((await apiA.get(`/v1/tool-calls/${call.id}`, root)).body.approval.approvers).toEqual(['approver', 'admin']);
    await eventually(
      async () =>
        (await apiA.get(`/v1/audit/events?toolCallId=${call.id}`, root)).body.events.find(
          (e: any) => e.type === 'ToolCallReminded',
        ),
      20_000,
      'ToolCallReminded',
    );
    const thread = await eventually(
      () =>
        slack
          .callsTo('chat.postMessage')
          .find((c) => c.args.thread_ts && /Escalated/.test(String(c.args.text)) && /admin/.test(String(c.args.text))),
      10_000,
      'an escalation in the Slack thread',
    );
    expect(String(thread.args.reply_broadcast)).toBe('true'); // form-encoded by the Web API client

    const ok = await decide(apiB, call.id, carol);
    expect(ok.body.status).toBe('approved');
    const types = (await apiA.get(`/v1/audit/events?toolCallId=${call.id}`, root)).body.events.map((e: any) => e.type);
    expect(types.filter((t: string) => t === 'ToolCallEscalated')).toHaveLength(1);
  });

  it('an admin extends a deadline (recorded); an approver may not; a decided call answers 409', async () => {
    const call = await pending('pay_invoice');
    const before = Date.parse(call.approval.expiresAt);
    const refused = await apiA.post(`/v1/tool-calls/${call.id}/deadline`, alice, { extendBy: 600 });
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 403, code: 'forbidden' });
    const bad = await apiA.post(`/v1/tool-calls/${call.id}/deadline`, root, {
      extendBy: 600,
      expiresAt: new Date().toISOString(),
    });
    expect({ status: bad.status, code: bad.body.code }).toEqual({ status: 400, code: 'validation_failed' });
    const r = await apiA.post(`/v1/tool-calls/${call.id}/deadline`, root, {
      extendBy: 600,
      reason: 'owner on a flight',
    });
    expect(r.status).toBe(200);
    expect(Date.parse(r.body.approval.expiresAt)).toBe(before + 600_000);
    const ev = (await apiA.get(`/v1/audit/events?toolCallId=${call.id}`, root)).body.events.find(
      (e: any) => e.type === 'ToolCallDeadlineExtended',
    );
    expect(ev.data).toMatchObject({
      from: new Date(before).toISOString(),
      to: new Date(before + 600_000).toISOString(),
      reason: 'owner on a flight',
    });
    await decide(apiA, call.id, alice, { decision: 'reject' });
    const late = await apiA.post(`/v1/tool-calls/${call.id}/deadline`, root, { extendBy: 60 });
    expect({ status: late.status, code: late.body.code }).toEqual({ status: 409, code: 'already_decided' });
  });

  it('keeps the audit chain intact after escalations', async () => {
    expectIntactChain(await eventsOf(a.dataSource, 'default'));
  });
});

describe('the CLI: a whole step, and more time', () => {
  it('tollgate step approve decides what it may and exits 1 listing the refused; tollgate extend gives more time', async () => {
    const conv = `gov-cli-step-${++n}`;
    expect((await apiA.post('/v1/conversations', agent, { id: conv, user: { id: 'rita' } })).status).toBe(201);
    const r = await apiA.post(`/v1/conversations/${conv}/tool-calls`, agent, {
      toolCalls: [
        { toolName: 'send_email', arguments: { to: 'x@example.com' } },
        { toolName: 'wire_money', arguments: { amount: 1 } },
      ],
    });
    const [email, wire] = r.body.toolCalls;
    const step = await runCli(['step', 'approve', conv], cliEnv({ url: a.url, token: rita }));
    expect(step.code).toBe(1);
    expect(step.stdout.trim()).toBe(`${email.id} send_email: approved`);
    expect(step.stderr).toContain(`${wire.id}: self_approval: `);

    const ext = await runCli(
      ['extend', wire.id, '--by', '1h', '--reason', 'waiting for finance'],
      cliEnv({ url: a.url, token: root }),
    );
    expect(ext.code).toBe(0);
    const after = (await apiA.get(`/v1/tool-calls/${wire.id}`, root)).body.approval.expiresAt;
    expect(Date.parse(after)).toBe(Date.parse(wire.approval.expiresAt) + 3_600_000);
    expect(ext.stdout.trim()).toBe(`${wire.id} wire_money: pending, now expires ${after}`);
  });
});

describe('questions in Slack', () => {
  it('posts a question with its choices as buttons; a click answers it via slack, and the message shows the answer', async () => {
    const conv = `gov-q-${++n}`;
    expect((await apiA.post('/v1/conversations', agent, { id: conv })).status).toBe(201);
    const asked = await apiA.post(`/v1/conversations/${conv}/questions`, agent, {
      text: 'Which region? <!channel>',
      choices: ['EU', 'US'],
    });
    expect(asked.status).toBe(201);
    const q = asked.body;
    const message = await eventually(
      () => slack.callsTo('chat.postMessage').find((c) => JSON.stringify(c.args.blocks ?? '').includes(q.id)),
      10_000,
      'the question in Slack',
    );
    const blocks = JSON.stringify(message.args.blocks);
    expect(blocks).toContain('&lt;!channel&gt;'); // an agent's text never pings the channel
    expect(blocks).toContain('tollgate_answer:1');

    const click = {
      ...buttonClick(RITA_SLACK, 'tollgate_answer:1', q.id, slack.messageAbout(q.id)),
      actions: [
        {
          action_id: 'tollgate_answer:1',
          value: JSON.stringify({ q: q.id, a: 'US' }),
          type: 'button',
          block_id: 'tollgate_answer',
        },
      ],
    };
    const { body, headers } = slackRequest(SIGNING_SECRET, click);
    expect((await apiA.call('POST', '/v1/slack/interactions', { raw: body, headers })).status).toBe(200);
    const answered = (await apiA.get(`/v1/questions/${q.id}?wait=10`, agent)).body;
    expect(answered).toMatchObject({
      status: 'answered',
      answer: { text: 'US', by: { id: 'rita', via: 'slack' } },
    });
    await eventually(
      () =>
        slack
          .callsTo('chat.update')
          .find(
            (c) =>
              JSON.stringify(c.args.blocks ?? '').includes('Answered') && JSON.stringify(c.args.blocks).includes('US'),
          ),
      10_000,
      'the Slack message updated with the answer',
    );
  });
});

describe('questions over gRPC', () => {
  it('an agent asks and watches; a person answers over gRPC; the watch ends with the answer; a second answer is FAILED_PRECONDITION', async () => {
    const conv = `gov-grpc-q-${++n}`;
    expect((await apiA.post('/v1/conversations', agent, { id: conv })).status).toBe(201);
    const rpc = new TollgateGrpc(a.grpcAddress!);
    try {
      const q = await rpc.call(
        'AskQuestion',
        { conversationId: conv, text: 'Which region?', choices: ['EU', 'US'], id: 'ask-region' },
        agent,
      );
      expect(q).toMatchObject({
        conversationId: conv,
        status: 'QUESTION_STATUS_PENDING',
        choices: ['EU', 'US'],
        externalId: 'ask-region',
      });
      const again = await rpc.call(
        'AskQuestion',
        { conversationId: conv, text: 'Which region?', choices: ['EU', 'US'], id: 'ask-region' },
        agent,
      );
      expect(again.id).toBe(q.id);
      const watch = rpc.watch(q.id, agent, undefined, 'WatchQuestion');
      await watch.received(1);
      const bad = await rpc.failure('AnswerQuestion', { id: q.id, answer: 'Mars' }, alice);
      expect(bad.tollgateCode).toBe('validation_failed');
      const answered = await rpc.call('AnswerQuestion', { id: q.id, answer: 'EU' }, alice);
      expect(answered).toMatchObject({
        status: 'QUESTION_STATUS_ANSWERED',
        answer: { text: 'EU', by: { id: 'alice', via: 'CHANNEL_GRPC' } },
      });
      expect(await watch.ended).toEqual({ ok: true });
      expect(watch.messages.map((m) => m.status)).toEqual(['QUESTION_STATUS_PENDING', 'QUESTION_STATUS_ANSWERED']);
      expect((await rpc.failure('AnswerQuestion', { id: q.id, answer: 'US' }, bob)).tollgateCode).toBe(
        'already_answered',
      );
      expect((await rpc.failure('AnswerQuestion', { id: q.id, answer: 'US' }, agent)).code).toBe(7); // agents never answer
    } finally {
      rpc.close();
    }
  });
});
