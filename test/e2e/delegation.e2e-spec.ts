/**
 * Delegation (out of office), end to end against a real server and database: a person delegates their decisions
 * for a period (PUT/GET/DELETE /v1/me/delegation, refused clearly when wrong); while it holds, the delegate sees
 * and decides on the delegator's behalf what the delegator may decide, and nothing more: separation of duties for
 * both people, one voice in a quorum, no chain, no other tenant; it ends by itself; the audit trail records it;
 * email reaches the delegate too.
 */
import type { ParsedMail } from 'mailparser';
import { TollgateGrpc } from '../support/grpc';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { collectSseFrames, type SseFrame } from '../support/sse';
import { SmtpStandIn, startSmtpStandIn } from '../support/smtp-stand-in';
import { eventually, until } from '../support/wait';

jest.setTimeout(60_000);

let smtp: SmtpStandIn;
let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let root: string;
let ann: string;
let bob: string;
let carl: string;
let dave: string;
let audrey: string;

const DAY = 86_400_000;
const iso = (msFromNow: number) => new Date(Date.now() + msFromNow).toISOString();

beforeAll(async () => {
  smtp = await startSmtpStandIn();
  server = await startTestServer({
    outboxPollMs: 50,
    streamPollMs: 100,
    email: { smtpUrl: smtp.url, from: 'Tollgate <tollgate@example.com>' },
  });
  http = client(server.url);
  agent = await server.token('support-bot', ['agent']);
  root = await server.token('root', ['admin'], { name: 'Root' });
  ann = await server.token('ann', ['admin'], { name: 'Ann', email: 'ann@example.com' });
  // Bob holds no role that decides anything: only what Ann lends him.
  bob = await server.token('bob', ['viewer'], { name: 'Bob', email: 'Bob@Example.com' });
  carl = await server.token('carl', ['viewer'], { name: 'Carl', email: 'carl@example.com' });
  dave = await server.token('dave', ['admin'], { name: 'Dave' });
  audrey = await server.token('audrey', ['auditor'], { name: 'Audrey' });
  // Persons are on record from their own sign-ins.
  for (const t of [root, ann, bob, carl, dave, audrey]) expect((await http.get('/v1/me', t)).status).toBe(200);
  const policy = await http.put('/v1/policy', root, {
    rules: [
      { match: 'wire_money', level: 'confirm', approvers: ['admin'] },
      { match: 'strict_wire', level: 'confirm', approvers: ['admin'], selfApproval: false },
      { match: 'two_keys', level: 'confirm', approvers: ['admin'], quorum: 2 },
      { match: 'ask_carl', level: 'confirm', approvers: ['person:carl'] },
    ],
  });
  expect(policy.status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
  await smtp?.close();
});

let n = 0;
async function propose(toolName: string, user = 'rita', token = agent) {
  const conv = `deleg-${++n}`;
  const started = await http.post('/v1/conversations', token, { id: conv, user: { id: user, name: user } });
  expect(started.status).toBe(201);
  const res = await http.post(`/v1/conversations/${conv}/tool-calls`, token, {
    toolCalls: [{ toolName, arguments: { to: 'ACME GmbH', amount: 1200 } }],
  });
  expect(res.status).toBe(201);
  expect(res.body.toolCalls[0].status).toBe('pending');
  return res.body.toolCalls[0] as { id: string };
}

const decide = (id: string, token: string, decision = 'approve', reason?: string) =>
  http.post(`/v1/tool-calls/${id}/decision`, token, { decision, ...(reason ? { reason } : {}) });
const delegate = (token: string, body: Record<string, unknown>) => http.put('/v1/me/delegation', token, body);
const endDelegation = (token: string) => http.call('DELETE', '/v1/me/delegation', { token });
const trail = async (query: string) => (await http.get(`/v1/audit/events?${query}`, root)).body.events as any[];

describe('PUT, GET and DELETE /v1/me/delegation', () => {
  afterEach(async () => {
    expect((await endDelegation(ann)).status).toBe(204);
  });

  it('sets, shows and ends a delegation; each change is in the audit trail, a repeat changes nothing', async () => {
    expect((await http.get('/v1/me/delegation', ann)).body.code).toBe('no_delegation');
    const until = iso(DAY);
    const set = await delegate(ann, { to: 'bob', until, reason: 'Holiday' });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({
      to: { id: 'bob', name: 'Bob' },
      from: expect.any(String),
      until,
      reason: 'Holiday',
      active: true,
    });
    expect((await http.get('/v1/me/delegation', ann)).body).toEqual(set.body);
    // The same request again (a retry): the delegation that stands, nothing recorded.
    expect((await delegate(ann, { to: 'bob', until, reason: 'Holiday' })).body).toEqual(set.body);

    expect((await endDelegation(ann)).status).toBe(204);
    const gone = await http.get('/v1/me/delegation', ann);
    expect(gone.status).toBe(404);
    expect(gone.headers.get('content-type')).toContain('application/problem+json');
    expect(gone.body.code).toBe('no_delegation');

    const events = (await trail('type=DelegationSet,DelegationEnded&actor=ann')).filter((e) => e.data.until === until);
    expect(events.map((e) => [e.type, e.data])).toEqual([
      [
        'DelegationSet',
        { personId: 'ann', to: { id: 'bob', name: 'Bob' }, from: set.body.from, until, reason: 'Holiday' },
      ],
      [
        'DelegationEnded',
        {
          personId: 'ann',
          to: { id: 'bob', name: 'Bob' },
          from: set.body.from,
          until,
          reason: 'Holiday',
          endedAt: expect.any(String),
        },
      ],
    ]);
    expect(events[0].actor).toMatchObject({ id: 'ann', kind: 'person', via: 'api' });
  });

  it('names the delegate by an email one person with a role has, in any case; a later one starts later', async () => {
    const from = iso(DAY);
    const res = await delegate(ann, { to: 'BOB@example.COM', from, until: iso(3 * DAY) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ to: { id: 'bob' }, from, active: false });
    // Replacing it names what it replaced.
    const replaced = await delegate(ann, { to: 'carl', until: iso(DAY) });
    expect(replaced.body).toMatchObject({ to: { id: 'carl' }, active: true });
    const [event] = (await trail('type=DelegationSet&actor=ann')).slice(-1);
    expect(event.data).toMatchObject({ to: { id: 'carl' }, replaces: { to: { id: 'bob' }, from } });
  });

  it('refuses the caller, an unknown person, an agent, an email two persons share, with a stable code', async () => {
    const until = iso(DAY);
    const refused = async (token: string, to: string) => {
      const res = await delegate(token, { to, until });
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      return [res.status, res.body.code];
    };
    expect(await refused(ann, 'ann')).toEqual([400, 'delegation_to_self']);
    expect(await refused(ann, 'ANN@example.com')).toEqual([400, 'delegation_to_self']);
    expect(await refused(ann, 'nobody')).toEqual([400, 'unknown_person']);
    expect(await refused(ann, 'nobody@example.com')).toEqual([400, 'unknown_person']);
    // An agent is never a person: its id is no one to delegate to.
    await propose('wire_money');
    expect(await refused(ann, 'support-bot')).toEqual([400, 'unknown_person']);
    // An id that is both a person on record and an agent of the tenant is refused as the agent it is.
    const twin = await server.token('twin', ['viewer']);
    expect((await http.get('/v1/me', twin)).status).toBe(200);
    const twinAgent = await server.token('twin', ['agent']);
    expect((await http.post('/v1/conversations', twinAgent, { id: 'twin-conv' })).status).toBe(201);
    expect(await refused(ann, 'twin')).toEqual([400, 'delegate_is_agent']);
    // Two persons with a role share an address: naming it would be a guess.
    for (const sub of ['ops-1', 'ops-2'])
      expect(
        (await http.get('/v1/me', await server.token(sub, ['approver'], { email: 'ops@example.com' }))).status,
      ).toBe(200);
    expect(await refused(ann, 'ops@example.com')).toEqual([400, 'ambiguous_person']);
    // An agent token delegates nothing, before its body is read.
    const byAgent = await delegate(agent, { to: 'bob' });
    expect([byAgent.status, byAgent.body.code]).toEqual([403, 'forbidden']);
    expect((await http.get('/v1/me/delegation', agent)).status).toBe(403);
    expect((await endDelegation(agent)).status).toBe(403);
    expect((await http.get('/v1/me/delegation', ann)).status).toBe(404);
  });

  it('refuses bad times and bad bodies, naming the field', async () => {
    const faults = async (body: Record<string, unknown>) => {
      const res = await delegate(ann, { to: 'bob', ...body });
      expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
      return res.body.errors.map((e: { path: string }) => e.path);
    };
    expect(await faults({})).toEqual(['until']);
    expect(await faults({ until: 'next week' })).toEqual(['until']);
    expect(await faults({ until: iso(-60_000) })).toEqual(['until']);
    expect(await faults({ from: iso(2 * DAY), until: iso(DAY) })).toEqual(['until']);
    expect(await faults({ from: iso(DAY), until: iso(DAY + 90 * DAY + 60_000) })).toEqual(['until']);
    expect(await faults({ until: iso(91 * DAY) })).toEqual(['until']);
    expect(await faults({ from: iso(367 * DAY), until: iso(368 * DAY) })).toEqual(['from']);
    expect(await faults({ from: iso(-2 * 3600_000), until: iso(DAY) })).toEqual(['from']);
    expect(await faults({ until: iso(DAY), reason: 'x'.repeat(501) })).toEqual(['reason']);
    expect(await faults({ until: iso(DAY), scope: 'tenant' })).toEqual(['scope']);
    const noTo = await http.put('/v1/me/delegation', ann, { until: iso(DAY) });
    expect(noTo.body.errors.map((e: { path: string }) => e.path)).toEqual(['to']);
    expect((await http.get('/v1/me/delegation', ann)).status).toBe(404);
  });

  it("lists the tenant's delegations for admins and auditors only", async () => {
    expect((await delegate(ann, { to: 'bob', until: iso(DAY) })).status).toBe(200);
    const listed = await http.get('/v1/delegations', audrey);
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ person: { id: 'ann', name: 'Ann' }, to: { id: 'bob', name: 'Bob' }, active: true }),
      ]),
    );
    expect((await http.get('/v1/delegations', root)).status).toBe(200);
    expect((await http.get('/v1/delegations', bob)).status).toBe(403);
    expect((await http.get('/v1/delegations', agent)).status).toBe(403);
    expect((await http.get('/v1/delegations?limit=0', root)).body.code).toBe('validation_failed');
  });
});

describe('deciding on behalf of the delegator', () => {
  beforeAll(async () => {
    expect((await delegate(ann, { to: 'bob', until: iso(DAY), reason: 'Holiday' })).status).toBe(200);
  });
  afterAll(async () => {
    expect((await endDelegation(ann)).status).toBe(204);
    expect((await endDelegation(bob)).status).toBe(204);
  });

  it("lets bob, a viewer, see and approve a call only admins may decide, as made on ann's behalf", async () => {
    const call = await propose('wire_money');
    // Bob sees it in his inbox and reads it; Carl, with no delegation, neither.
    const inbox = await http.get('/v1/approvals', bob);
    expect(inbox.body.items.map((c: { id: string }) => c.id)).toContain(call.id);
    expect((await http.get('/v1/approvals', carl)).body.items.map((c: { id: string }) => c.id)).not.toContain(call.id);
    expect((await http.get(`/v1/tool-calls/${call.id}`, bob)).status).toBe(200);
    expect((await http.get(`/v1/tool-calls/${call.id}`, carl)).status).toBe(404);
    expect((await decide(call.id, carl)).status).toBe(404);
    // Not the conversation: only the calls ann may decide.
    expect((await http.get(`/v1/conversations/${inbox.body.items[0].conversation.id}`, bob)).status).toBe(404);

    const res = await decide(call.id, bob);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('approved');
    expect(res.body.decision.by).toEqual({
      id: 'bob',
      name: 'Bob',
      via: 'api',
      onBehalfOf: { id: 'ann', name: 'Ann' },
    });
    const [approved] = await trail(`toolCallId=${call.id}&type=ToolCallApproved`);
    expect(approved.actor).toMatchObject({ id: 'bob', kind: 'person', onBehalfOf: { id: 'ann', name: 'Ann' } });
    expect(approved.data).toMatchObject({ approvedBy: 'bob', onBehalfOf: 'ann' });
  });

  it('decides on behalf over gRPC too: the same checks, and the decision names both people', async () => {
    const rpc = new TollgateGrpc(server.grpcAddress!);
    try {
      const call = await propose('wire_money');
      const listed = await rpc.call('ListApprovals', {}, bob);
      expect(listed.items.map((a: any) => a.toolCall.id)).toContain(call.id);
      const decided = await rpc.call('DecideToolCall', { id: call.id, decision: 'DECISION_KIND_APPROVE' }, bob);
      expect(decided.decision.by).toMatchObject({
        id: 'bob',
        via: 'CHANNEL_GRPC',
        onBehalfOf: { id: 'ann', name: 'Ann' },
      });
      const other = await propose('wire_money');
      const refused = await rpc.failure('DecideToolCall', { id: other.id, decision: 'DECISION_KIND_APPROVE' }, carl);
      expect(refused.tollgateCode).toBe('not_found');
    } finally {
      rpc.client.close();
    }
  });

  it('is not passed on: the delegate of a delegate decides nothing of the first delegator', async () => {
    expect((await delegate(bob, { to: 'carl', until: iso(DAY) })).status).toBe(200);
    const call = await propose('wire_money');
    expect((await http.get(`/v1/tool-calls/${call.id}`, carl)).status).toBe(404);
    expect((await decide(call.id, carl)).status).toBe(404);
    expect((await http.get('/v1/approvals', carl)).body.items.map((c: { id: string }) => c.id)).not.toContain(call.id);
    expect((await decide(call.id, bob, 'reject', 'not today')).body.decision.by.onBehalfOf).toEqual({
      id: 'ann',
      name: 'Ann',
    });
  });

  it('makes the standing grant the delegator could make, recorded as made for her', async () => {
    const call = await propose('wire_money');
    const res = await http.post(`/v1/tool-calls/${call.id}/decision`, bob, {
      decision: 'always_allow',
      scope: 'tenant',
      expiresIn: 60,
    });
    expect(res.status).toBe(200);
    // Revoked at once: a tenant-wide grant would let the next calls of this file through.
    const grants = (await http.get('/v1/grants?scope=tenant', root)).body.items;
    expect(grants).toHaveLength(1);
    expect((await http.call('DELETE', `/v1/grants/${grants[0].id}`, { token: root })).status).toBe(200);
    const [created] = await trail(`toolCallId=${call.id}&type=GrantCreated`);
    expect(created.actor).toMatchObject({ id: 'bob', onBehalfOf: { id: 'ann' } });
  });

  it('holds separation of duties for the delegate: bob may not approve his own conversation’s call for ann', async () => {
    const call = await propose('strict_wire', 'bob');
    const res = await decide(call.id, bob);
    expect([res.status, res.body.code]).toEqual([403, 'self_approval']);
    const [refused] = await trail(`toolCallId=${call.id}&type=DecisionRefused`);
    expect(refused.data).toMatchObject({ code: 'self_approval', refusedBy: 'bob', onBehalfOf: 'ann' });
    expect((await http.get(`/v1/tool-calls/${call.id}`, agent)).body.status).toBe('pending');
  });

  it('holds separation of duties for the delegator: bob may not approve for ann what ann could not', async () => {
    const call = await propose('strict_wire', 'ann');
    const res = await decide(call.id, bob);
    expect([res.status, res.body.code]).toEqual([403, 'self_approval']);
    expect(res.body.detail).toContain('ann, on whose behalf you act');
    // As she could, he may reject it for her.
    const rejected = await decide(call.id, bob, 'reject', 'not like this');
    expect(rejected.status).toBe(200);
    expect(rejected.body.decision).toMatchObject({ outcome: 'rejected', by: { id: 'bob', onBehalfOf: { id: 'ann' } } });
  });

  it('counts an approval for ann once in a quorum: neither ann nor bob adds another', async () => {
    const call = await propose('two_keys');
    const first = await decide(call.id, bob);
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('pending');
    expect(first.body.approval.quorum.approvedBy).toEqual([
      expect.objectContaining({ id: 'bob', onBehalfOf: { id: 'ann', name: 'Ann' } }),
    ]);
    const byAnn = await decide(call.id, ann);
    expect([byAnn.status, byAnn.body.code]).toEqual([409, 'already_decided']);
    expect(byAnn.body.detail).toContain('bob approved it on behalf of ann');
    const again = await decide(call.id, bob);
    expect([again.status, again.body.approval.quorum.approvedBy.length]).toEqual([200, 1]);
    const second = await decide(call.id, dave);
    expect(second.body.status).toBe('approved');
    expect(second.body.approval.quorum.approvedBy.map((a: { id: string }) => a.id)).toEqual(['bob', 'dave']);
  });

  it('carries the calls ann may decide on bob’s live stream, and not on the stream of someone she did not delegate to', async () => {
    const bobs = openStream(`${server.url}/v1/events/stream`, bob);
    const carls = openStream(`${server.url}/v1/events/stream`, carl);
    try {
      await bobs.opened();
      await carls.opened();
      const call = await propose('wire_money');
      await bobs.until((frames) =>
        frames.some((f) => f.event === 'ApprovalRequested' && f.data.toolCallId === call.id),
      );
      // A later call that names Carl reaches his stream: by then ann's would have, were it his to see.
      const his = await propose('ask_carl');
      await carls.until((frames) => frames.some((f) => f.data.toolCallId === his.id));
      expect(carls.frames.filter((f) => f.data.toolCallId === call.id)).toEqual([]);
    } finally {
      await bobs.close();
      await carls.close();
    }
  });

  it('mails ann’s calls to bob too, and to ann still; bob’s link decides on her behalf', async () => {
    const call = await propose('wire_money');
    const mailTo = (address: string): Promise<ParsedMail> =>
      eventually(
        () =>
          smtp.messages.find((m) => m.text?.includes(call.id) && JSON.stringify(m.to).toLowerCase().includes(address)),
        15_000,
        `email to ${address} about ${call.id}`,
      );
    const bobs = await mailTo('bob@example.com');
    await mailTo('ann@example.com');
    // Carl decides nothing, and stands in for no one who does.
    expect(smtp.messages.some((m) => m.text?.includes(call.id) && JSON.stringify(m.to).includes('carl'))).toBe(false);

    const approve = /^Approve: (\S+)$/m.exec(bobs.text ?? '')![1];
    expect((await fetch(approve)).status).toBe(200); // the confirmation page: bob may decide it, through ann
    const used = await fetch(approve, { method: 'POST', headers: { accept: 'application/json' } });
    expect(used.status).toBe(200);
    const decided = (await http.get(`/v1/tool-calls/${call.id}`, ann)).body;
    expect(decided.decision.by).toMatchObject({ id: 'bob', via: 'email', onBehalfOf: { id: 'ann' } });
  });
});

describe('the end of a delegation', () => {
  it('stops applying by itself at `until`: bob no longer sees nor decides what he could', async () => {
    const call = await propose('wire_money');
    const set = await delegate(ann, { to: 'bob', until: iso(3_000) });
    expect(set.status).toBe(200);
    expect((await http.get(`/v1/tool-calls/${call.id}`, bob)).status).toBe(200);
    // Past `until` (read from the server: its answer turns to 404 when the delegation is over).
    await until(async () => (await http.get('/v1/me/delegation', ann)).status === 404, 15_000, 'the delegation to end');
    expect((await http.get(`/v1/tool-calls/${call.id}`, bob)).status).toBe(404);
    expect((await decide(call.id, bob)).status).toBe(404);
    expect((await http.get('/v1/approvals', bob)).body.items.map((c: { id: string }) => c.id)).not.toContain(call.id);
    expect((await http.get('/v1/delegations', root)).body.items.map((d: any) => d.person.id)).not.toContain('ann');
  });

  it('ends at once when ended: bob decides nothing more for ann', async () => {
    expect((await delegate(ann, { to: 'bob', until: iso(DAY) })).status).toBe(200);
    const call = await propose('wire_money');
    expect((await endDelegation(ann)).status).toBe(204);
    expect((await decide(call.id, bob)).status).toBe(404);
    expect((await endDelegation(ann)).status).toBe(204);
  });

  it("lends nothing once the delegator's sign-in is stale: her recorded roles are not trusted", async () => {
    const strict = await startTestServer({ personMaxAgeSeconds: 1 });
    try {
      const api = client(strict.url);
      const a = await strict.token('ann', ['admin'], { name: 'Ann' });
      const b = await strict.token('bob', ['viewer']);
      const bot = await strict.token('bot', ['agent']);
      expect(
        (await api.put('/v1/policy', a, { rules: [{ match: 'wire_money', level: 'confirm', approvers: ['admin'] }] }))
          .status,
      ).toBe(200);
      expect(
        (await api.put('/v1/me/delegation', a, { to: (await api.get('/v1/me', b)).body.id, until: iso(DAY) })).status,
      ).toBe(200);
      expect((await api.post('/v1/conversations', bot, { id: 'c1' })).status).toBe(201);
      const res = await api.post('/v1/conversations/c1/tool-calls', bot, {
        toolCalls: [{ toolName: 'wire_money', arguments: {} }],
      });
      const id = res.body.toolCalls[0].id;
      // Ann signs in no more: once her record is older than the max age, bob acts for no one (that the same
      // delegation lets him read and decide while it is fresh is shown above).
      await until(
        async () => (await api.get(`/v1/tool-calls/${id}`, b)).status === 404,
        15_000,
        "ann's sign-in to go stale",
      );
      expect((await api.post(`/v1/tool-calls/${id}/decision`, b, { decision: 'approve' })).status).toBe(404);
    } finally {
      await strict.stop();
    }
  });
});

describe('tenants are walls', () => {
  it('gives nothing in another tenant: bob acts for ann in her tenant only', async () => {
    expect((await delegate(ann, { to: 'bob', until: iso(DAY) })).status).toBe(200);
    try {
      const tenant = 'globex';
      const gAgent = await server.token('support-bot', ['agent'], { tenant });
      const gAnn = await server.token('ann', ['admin'], { tenant, name: 'Ann' });
      const gBob = await server.token('bob', ['viewer'], { tenant, name: 'Bob' });
      for (const t of [gAnn, gBob]) expect((await http.get('/v1/me', t)).status).toBe(200);
      expect(
        (
          await http.put('/v1/policy', gAnn, {
            rules: [{ match: 'wire_money', level: 'confirm', approvers: ['admin'] }],
          })
        ).status,
      ).toBe(200);
      const call = await propose('wire_money', 'rita', gAgent);
      expect((await http.get('/v1/approvals', gBob)).body.items).toEqual([]);
      expect((await http.get(`/v1/tool-calls/${call.id}`, gBob)).status).toBe(404);
      expect((await decide(call.id, gBob)).status).toBe(404);
      // Nor does bob's default-tenant token reach the other tenant's call.
      expect((await decide(call.id, bob)).status).toBe(404);
      // A person of another tenant is no one here.
      expect((await http.put('/v1/me/delegation', gAnn, { to: 'dave', until: iso(DAY) })).body.code).toBe(
        'unknown_person',
      );
      expect((await http.get('/v1/delegations', gAnn)).body.items).toEqual([]);
    } finally {
      expect((await endDelegation(ann)).status).toBe(204);
    }
  });
});

type Frame = SseFrame<{ toolCallId?: string }>;

/** Reads an SSE response frame by frame. */
function openStream(url: string, token: string) {
  const controller = new AbortController();
  const frames: Frame[] = [];
  let status = 0;
  const done = (async () => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
    status = res.status;
    if (!res.ok || !res.body) return;
    await collectSseFrames(res.body, frames);
  })();
  return {
    frames,
    async opened() {
      await until(() => status !== 0, 10_000, 'the stream to open');
      expect(status).toBe(200);
    },
    until: (pred: (f: Frame[]) => boolean) => until(() => pred(frames), 10_000, 'the stream to carry the call'),
    async close() {
      controller.abort();
      await done.catch(() => undefined);
    },
  };
}
