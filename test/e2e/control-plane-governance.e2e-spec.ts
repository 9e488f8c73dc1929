/**
 * Four eyes on the control plane (issue 28 part 6), through HTTP on a real database: with `governance: {quorum: 2}`
 * in the policy, an admin's policy change, rollback, resume, new webhook or tenant-wide grant answers 202 with a
 * pending change and takes effect only when a second admin approves it (self-approval refused), once, recorded in
 * the audit trail with both people. Each test has a tenant of its own (tenants are walls).
 */
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { eventually } from '../support/wait';

let server: TestServer;
let http: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});

afterAll(async () => {
  await server?.stop();
});

function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

const GOVERNED = { governance: { quorum: 2 }, rules: [{ match: 'shell', level: 'confirm' }] };

/** A tenant with two admins (Ann proposes, Bob approves), an auditor, an approver and an agent. */
async function tenant(name: string, policy: unknown = GOVERNED) {
  let n = 0;
  const t = {
    ann: await server.token('ann', ['admin'], { tenant: name, name: 'Ann' }),
    bob: await server.token('bob', ['admin'], { tenant: name, name: 'Bob' }),
    auditor: await server.token('audrey', ['auditor'], { tenant: name }),
    approver: await server.token('al', ['approver'], { tenant: name }),
    agent: await server.token('bot', ['agent'], { tenant: name }),
    async propose(toolName = 'shell') {
      const conv = `${name}-c${++n}`;
      expect((await http.post('/v1/conversations', t.agent, { id: conv })).status).toBe(201);
      const res = await http.post(`/v1/conversations/${conv}/tool-calls`, t.agent, {
        toolCalls: [{ toolName, arguments: { cmd: 'ls' } }],
      });
      expect(res.body.toolCalls[0].status).toBe('pending');
      return res.body.toolCalls[0];
    },
    async trail(types: string) {
      const res = await http.get(`/v1/audit/events?type=${types}`, t.auditor);
      expect(res.status).toBe(200);
      return res.body.events as Array<{ type: string; actor: { id: string }; data: any }>;
    },
  };
  expect((await http.put('/v1/policy', t.ann, policy)).status).toBe(200);
  return t;
}

function expectHeld(res: Reply, kind: string) {
  expect(res.status).toBe(202);
  expect(res.body.pendingChange).toMatchObject({
    id: expect.stringMatching(/^chg_/),
    kind,
    summary: expect.any(String),
    payloadDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
    proposedBy: { id: 'ann', name: 'Ann' },
    approvals: [{ by: { id: 'ann', name: 'Ann' }, at: expect.any(String) }],
    needed: 2,
    status: 'pending',
    expiresAt: expect.any(String),
  });
  return res.body.pendingChange.id as string;
}

describe('a policy change under governance', () => {
  it('is held (202), leaves the policy as it was, refuses self-approval, and applies when a second admin approves', async () => {
    const t = await tenant('gov-put');
    const before = (await http.get('/v1/policy', t.ann)).body;
    const next = { ...GOVERNED, rules: [{ match: 'shell', level: 'deny' }] };
    const id = expectHeld(await http.put('/v1/policy', t.ann, next), 'policy_update');

    const unchanged = await http.get('/v1/policy', t.ann);
    expect(unchanged.body.version).toBe(before.version);
    expect(unchanged.body.rules).toEqual(before.rules);

    // Listed for admins and auditors, not for approvers or agents.
    const listed = await http.get('/v1/changes?status=pending', t.bob);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((c: any) => c.id)).toEqual([id]);
    expect(listed.body.items[0].payload.document.rules).toEqual([{ match: 'shell', level: 'deny' }]);
    expect((await http.get(`/v1/changes/${id}`, t.auditor)).status).toBe(200);
    expectProblem(await http.get('/v1/changes', t.approver), 403, 'forbidden');
    expectProblem(await http.get('/v1/changes', t.agent), 403, 'forbidden');
    expectProblem(await http.post(`/v1/changes/${id}/approve`, t.auditor), 403, 'forbidden');

    expectProblem(await http.post(`/v1/changes/${id}/approve`, t.ann), 403, 'self_approval');
    expect((await http.get('/v1/policy', t.ann)).body.version).toBe(before.version);

    const approved = await http.post(`/v1/changes/${id}/approve`, t.bob);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({
      applied: true,
      change: { id, status: 'applied', approvals: [{ by: { id: 'ann' } }, { by: { id: 'bob', name: 'Bob' } }] },
      result: { version: before.version + 1 },
    });
    const after = await http.get('/v1/policy', t.ann);
    expect(after.body.version).toBe(before.version + 1);
    expect(after.body.rules).toEqual([expect.objectContaining({ match: 'shell', level: 'deny' })]);

    // The trail: proposed by Ann; the new version in Ann's name, approved by Bob and applied naming both (one
    // transaction).
    const events = await t.trail('ChangeProposed,ChangeApproved,ChangeApplied,PolicyUpdated');
    const mine = events.filter((e) => e.type === 'PolicyUpdated' || e.data.changeId === id);
    expect(mine.map((e) => [e.type, e.actor.id])).toEqual([
      ['PolicyUpdated', 'ann'], // governance turned on: not held (the policy in force had none)
      ['ChangeProposed', 'ann'],
      ['PolicyUpdated', 'ann'],
      ['ChangeApproved', 'bob'],
      ['ChangeApplied', 'bob'],
    ]);
    expect(mine[4].data).toMatchObject({
      kind: 'policy_update',
      proposedBy: { id: 'ann', name: 'Ann' },
      approvedBy: [{ id: 'bob', name: 'Bob' }],
      payloadDigest: mine[1].data.payloadDigest,
    });
    expect(mine[2].data).toMatchObject({ version: before.version + 1 });
    expect(mine[3].data).toMatchObject({
      approvals: 2,
      needed: 2,
    });
    expectProblem(await http.post(`/v1/changes/${id}/approve`, t.bob), 409, 'change_not_pending');
  });

  it('turning governance off is itself held; once applied, changes take effect at once again', async () => {
    const t = await tenant('gov-off');
    const id = expectHeld(await http.put('/v1/policy', t.ann, { rules: [] }), 'policy_update');
    expect((await http.get(`/v1/changes/${id}`, t.ann)).body.summary).toMatch(/turns governance off/);
    expect((await http.post(`/v1/changes/${id}/approve`, t.bob)).status).toBe(200);
    const direct = await http.put('/v1/policy', t.ann, { rules: [{ match: 'x', level: 'deny' }] });
    expect(direct.status).toBe(200);
    expect(direct.body.rules).toEqual([expect.objectContaining({ match: 'x' })]);
  });

  it('a change made against version N is closed, not applied, once the policy moved on (409 policy_moved_on)', async () => {
    const t = await tenant('gov-moved');
    const first = expectHeld(await http.put('/v1/policy', t.ann, { ...GOVERNED, rules: [] }), 'policy_update');
    const second = expectHeld(
      await http.put('/v1/policy', t.ann, { ...GOVERNED, rules: [{ match: 'a', level: 'deny' }] }),
      'policy_update',
    );
    expect((await http.post(`/v1/changes/${second}/approve`, t.bob)).status).toBe(200);
    const version = (await http.get('/v1/policy', t.ann)).body.version;
    expectProblem(await http.post(`/v1/changes/${first}/approve`, t.bob), 409, 'policy_moved_on');
    expect((await http.get('/v1/policy', t.ann)).body.version).toBe(version);
    expect((await http.get(`/v1/changes/${first}`, t.ann)).body).toMatchObject({ status: 'rejected' });
  });

  it('two approvals at once apply it once', async () => {
    const t = await tenant('gov-race');
    const cat = await server.token('cat', ['admin'], { tenant: 'gov-race', name: 'Cat' });
    const before = (await http.get('/v1/policy', t.ann)).body.version;
    const id = expectHeld(await http.put('/v1/policy', t.ann, { ...GOVERNED, rules: [] }), 'policy_update');
    const answers = await Promise.all([
      http.post(`/v1/changes/${id}/approve`, t.bob),
      http.post(`/v1/changes/${id}/approve`, cat),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(answers.find((a) => a.status === 409)!.body.code).toBe('change_not_pending');
    expect((await http.get('/v1/policy', t.ann)).body.version).toBe(before + 1);
    const applied = (await t.trail('ChangeApplied,PolicyUpdated')).filter(
      (e) => e.type === 'ChangeApplied' || e.data.version === before + 1,
    );
    expect(applied.map((e) => e.type)).toEqual(['PolicyUpdated', 'ChangeApplied']);
  });

  // Two instances on one database (PostgreSQL only: embedded PGlite belongs to one process).
  (process.env.DATABASE_URL ? it : it.skip)('two approvals at once on two instances apply it once', async () => {
    const other = await startTestServer({ instanceId: 'test-2' }, { db: server.db });
    try {
      const t = await tenant('gov-race-2');
      const cat = await server.token('cat', ['admin'], { tenant: 'gov-race-2', name: 'Cat' });
      const before = (await http.get('/v1/policy', t.ann)).body.version;
      const id = expectHeld(await http.put('/v1/policy', t.ann, { ...GOVERNED, rules: [] }), 'policy_update');
      const answers = await Promise.all([
        http.post(`/v1/changes/${id}/approve`, t.bob),
        client(other.url).post(`/v1/changes/${id}/approve`, cat),
      ]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
      expect((await http.get('/v1/policy', t.ann)).body.version).toBe(before + 1);
      expect((await t.trail('ChangeApplied')).filter((e) => e.data.changeId === id)).toHaveLength(1);
    } finally {
      await other.stop();
    }
  });

  it('a rejection by any admin ends it; a change past its deadline expires and can no longer be approved', async () => {
    const t = await tenant('gov-end');
    const rejected = expectHeld(await http.put('/v1/policy', t.ann, { ...GOVERNED, rules: [] }), 'policy_update');
    const r = await http.post(`/v1/changes/${rejected}/reject`, t.bob, { reason: 'not this week' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'rejected', rejectedBy: { id: 'bob' }, reason: 'not this week' });
    expectProblem(await http.post(`/v1/changes/${rejected}/approve`, t.bob), 409, 'change_not_pending');

    const late = expectHeld(await http.put('/v1/policy', t.ann, { ...GOVERNED, rules: [] }), 'policy_update');
    await server.dataSource.query(
      `UPDATE pending_changes SET expires_at = now() - interval '1 second' WHERE tenant_id = $1 AND id = $2`,
      ['gov-end', late],
    );
    expect((await http.get(`/v1/changes/${late}`, t.ann)).body.status).toBe('expired');
    expectProblem(await http.post(`/v1/changes/${late}/approve`, t.bob), 409, 'change_not_pending');
    const expired = (await t.trail('ChangeExpired')).filter((e) => e.data.changeId === late);
    expect(expired).toHaveLength(1);
    expect((await http.get('/v1/changes?status=expired', t.ann)).body.items.map((c: any) => c.id)).toEqual([late]);
  });

  it('the sweeper records the expiry of a change nobody touches', async () => {
    const t = await tenant('gov-sweep');
    const id = expectHeld(await http.put('/v1/policy', t.ann, { ...GOVERNED, rules: [] }), 'policy_update');
    await server.dataSource.query(
      `UPDATE pending_changes SET expires_at = now() - interval '1 second' WHERE tenant_id = $1 AND id = $2`,
      ['gov-sweep', id],
    );
    const expired = await eventually(async () => {
      const events = (await t.trail('ChangeExpired')).filter((e) => e.data.changeId === id);
      return events.length > 0 ? events : undefined;
    });
    expect(expired).toHaveLength(1);
    expect(expired[0].actor.id).toBe('system');
  });

  it("another tenant's change is not found", async () => {
    const t = await tenant('gov-wall-a');
    const other = await tenant('gov-wall-b');
    const id = expectHeld(await http.put('/v1/policy', t.ann, { ...GOVERNED, rules: [] }), 'policy_update');
    expectProblem(await http.get(`/v1/changes/${id}`, other.bob), 404, 'not_found');
    expectProblem(await http.post(`/v1/changes/${id}/approve`, other.bob), 404, 'not_found');
    expect((await http.get('/v1/changes', other.bob)).body.items).toEqual([]);
    // Bounded input: a problem with a stable code, never a 500.
    expectProblem(
      await http.post(`/v1/changes/${id}/reject`, t.bob, { reason: 'x'.repeat(1001) }),
      400,
      'validation_failed',
    );
    expectProblem(await http.post(`/v1/changes/${id}/reject`, t.bob, { why: 'no' }), 400, 'validation_failed');
    expectProblem(await http.get('/v1/changes?cursor=nope', t.bob), 400, 'validation_failed');
    expectProblem(await http.get('/v1/changes?limit=0', t.bob), 400, 'validation_failed');
    expectProblem(await http.post(`/v1/changes/${id}/approve`, t.agent), 403, 'forbidden');
    expectProblem(await http.get('/v1/changes'), 401, 'unauthenticated');
    expect((await http.get(`/v1/changes/${id}`, t.ann)).body.status).toBe('pending');
  });
});

describe('other governed actions', () => {
  it('a rollback is held and applies on approval', async () => {
    const t = await tenant('gov-rollback');
    const v1 = (await http.get('/v1/policy', t.ann)).body.version;
    const p = expectHeld(await http.put('/v1/policy', t.ann, { ...GOVERNED, rules: [] }), 'policy_update');
    expect((await http.post(`/v1/changes/${p}/approve`, t.bob)).status).toBe(200);
    const id = expectHeld(await http.post('/v1/policy/rollback', t.ann, { version: v1 }), 'policy_rollback');
    expect((await http.get('/v1/policy', t.ann)).body.version).toBe(v1 + 1);
    expectProblem(await http.post(`/v1/changes/${id}/approve`, t.ann), 403, 'self_approval');
    const res = await http.post(`/v1/changes/${id}/approve`, t.bob);
    expect(res.body).toMatchObject({ applied: true, result: { version: v1 + 2 } });
    expect((await http.get('/v1/policy', t.ann)).body.rules).toEqual([expect.objectContaining({ match: 'shell' })]);
  });

  it('a resume after a halt is held: the halt stands until a second admin approves', async () => {
    const t = await tenant('gov-resume');
    expect((await http.post('/v1/halt', t.ann, { scope: 'tenant', reason: 'drill' })).status).toBe(200);
    const id = expectHeld(await http.post('/v1/resume', t.ann, { scope: 'tenant' }), 'resume');
    expect((await http.get('/v1/status', t.ann)).body.halted).toBe(true);
    expectProblem(await http.post(`/v1/changes/${id}/approve`, t.ann), 403, 'self_approval');
    const res = await http.post(`/v1/changes/${id}/approve`, t.bob);
    expect(res.body).toMatchObject({ applied: true, result: { scope: 'tenant', halted: false, changed: true } });
    expect((await http.get('/v1/status', t.ann)).body.halted).toBe(false);
    const resumed = await t.trail('Resumed');
    expect(resumed.map((e) => e.actor.id)).toEqual(['ann']);
  });

  it('a new webhook is held (its secret shown to the proposer once) and exists only once approved', async () => {
    const t = await tenant('gov-webhook');
    const res = await http.post('/v1/webhooks', t.ann, {
      url: 'http://127.0.0.1:9/hook',
      events: ['ToolCallApproved'],
    });
    const id = expectHeld(res, 'webhook_create');
    expect(res.body.secret).toMatch(/^whsec_/);
    const change = (await http.get(`/v1/changes/${id}`, t.bob)).body;
    expect(JSON.stringify(change)).not.toContain(res.body.secret);
    expect((await http.get('/v1/webhooks', t.ann)).body.items).toEqual([]);
    const approved = await http.post(`/v1/changes/${id}/approve`, t.bob);
    expect(approved.body).toMatchObject({ applied: true, result: { url: 'http://127.0.0.1:9/hook' } });
    expect(JSON.stringify(approved.body)).not.toContain(res.body.secret);
    expect((await http.get('/v1/webhooks', t.ann)).body.items).toHaveLength(1);
  });

  it('a tenant-wide always_allow approves the call at once; the grant waits for a second admin', async () => {
    const t = await tenant('gov-grant');
    const call = await t.propose();
    const res = await http.post(`/v1/tool-calls/${call.id}/decision`, t.ann, {
      decision: 'always_allow',
      scope: 'tenant',
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('approved');
    expect(res.body.pendingChange).toMatchObject({ kind: 'tenant_grant', status: 'pending' });
    expect((await http.get('/v1/grants', t.ann)).body.items).toEqual([]);
    expect((await t.propose()).status).toBe('pending'); // no grant yet
    const approved = await http.post(`/v1/changes/${res.body.pendingChange.id}/approve`, t.bob);
    expect(approved.body).toMatchObject({ applied: true, result: { scope: 'tenant', toolName: 'shell' } });
    const grants = (await http.get('/v1/grants', t.ann)).body.items;
    expect(grants).toEqual([
      expect.objectContaining({ scope: 'tenant', createdBy: expect.objectContaining({ id: 'ann' }) }),
    ]);
    const conv = 'gov-grant-after';
    await http.post('/v1/conversations', t.agent, { id: conv });
    const after = await http.post(`/v1/conversations/${conv}/tool-calls`, t.agent, {
      toolCalls: [{ toolName: 'shell', arguments: { cmd: 'ls' } }],
    });
    expect(after.body.toolCalls[0].status).toBe('approved');
  });
});

describe('without governance', () => {
  it('every control-plane change takes effect at once, as before', async () => {
    const t = await tenant('gov-none', { rules: [{ match: 'shell', level: 'confirm' }] });
    expect((await http.put('/v1/policy', t.ann, { rules: [] })).status).toBe(200);
    expect((await http.post('/v1/halt', t.ann, { scope: 'tenant', reason: 'drill' })).status).toBe(200);
    const resumed = await http.post('/v1/resume', t.ann, { scope: 'tenant' });
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ halted: false, changed: true });
    expect(resumed.body.pendingChange).toBeUndefined();
    expect((await http.get('/v1/changes', t.ann)).body.items).toEqual([]);
  });
});
