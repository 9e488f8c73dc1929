/**
 * Expiry (CONTRACT §6, §11 Timing): a pending call past its `expiresAt` becomes `expired` within 2 s,
 * by the sweeper, without anyone reading it; it can no longer be decided or run, waiters learn of it,
 * and the conversation stops being blocked.
 */
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let approver: string;

beforeAll(async () => {
  server = await startTestServer({ sweepIntervalMs: 100 });
  http = client(server.url);
  agent = await server.token('agent-e', ['agent']);
  approver = await server.token('alice', ['approver']);
  const admin = await server.token('root', ['admin']);
  expect((await http.put('/v1/policy', admin, { defaults: { timeoutSeconds: 1 } })).status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
});

function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

async function pendingCall(convId: string, token = agent) {
  expect((await http.post('/v1/conversations', token, { id: convId })).status).toBe(201);
  const res = await http.post(`/v1/conversations/${convId}/tool-calls`, token, {
    toolCalls: [{ toolName: 'send_email', arguments: { to: 'bob@example.com' } }],
  });
  expect(res.status).toBe(201);
  const call = res.body.toolCalls[0];
  expect(call.status).toBe('pending');
  return call;
}

/**
 * Polls the conversation (a read that does not expire anything itself) until the call leaves
 * `pending`, giving up well after the contract's bound.
 */
async function pollConversationUntilSettled(convId: string, callId: string, token = agent, giveUpMs = 8000) {
  const deadline = Date.now() + giveUpMs;
  for (;;) {
    const conv = await http.get(`/v1/conversations/${convId}`, token);
    expect(conv.status).toBe(200);
    const call = conv.body.toolCalls.find((c: any) => c.id === callId);
    if (call.status !== 'pending' || Date.now() > deadline) return { conv: conv.body, call };
    await new Promise((r) => setTimeout(r, 100));
  }
}

function within<T>(p: Promise<T>, ms: number): Promise<T | 'timer'> {
  let t: NodeJS.Timeout;
  return Promise.race([p, new Promise<'timer'>((r) => (t = setTimeout(() => r('timer'), ms)))]).finally(() =>
    clearTimeout(t),
  );
}

describe('a pending call past its timeout', () => {
  let call: any;
  let settled: { conv: any; call: any };

  beforeAll(async () => {
    call = await pendingCall('exp-1');
    settled = await pollConversationUntilSettled('exp-1', call.id);
  });

  it('carries an expiresAt one timeout after it was proposed', () => {
    const ms = Date.parse(call.approval.expiresAt) - Date.parse(call.createdAt);
    expect(ms).toBe(1000); // both stamped from the one clock reading of the proposal
  });

  it('becomes expired after expiresAt without anyone reading the call', () => {
    expect(settled.call.status).toBe('expired');
    expect(settled.call.decision).toMatchObject({ outcome: 'expired' });
    const late = Date.parse(settled.call.decision.at) - Date.parse(call.approval.expiresAt);
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThanOrEqual(2000);
  });

  it('no longer blocks its conversation', async () => {
    expect(settled.conv).toMatchObject({ status: 'active', pendingCount: 0 });
    const next = await http.post('/v1/conversations/exp-1/tool-calls', agent, {
      toolCalls: [{ toolName: 'send_email', arguments: { to: 'carol@example.com' } }],
    });
    expect(next.status).toBe(201);
    expect(next.body.toolCalls[0].status).toBe('pending');
  });

  it('is gone from the approvals inbox', async () => {
    const inbox = await http.get('/v1/approvals', approver);
    expect(inbox.status).toBe(200);
    expect(inbox.body.items.map((i: any) => i.id)).not.toContain(call.id);
  });

  it('cannot be decided any more: 409 already_decided with the expiry as the standing decision', async () => {
    const res = await http.post(`/v1/tool-calls/${call.id}/decision`, approver, { decision: 'approve' });
    expectProblem(res, 409, 'already_decided');
    expect(res.body.decision).toMatchObject({ outcome: 'expired' });
  });

  it('never runs: claiming it answers 409 not_approved', async () => {
    expectProblem(await http.post(`/v1/tool-calls/${call.id}/execution`, agent), 409, 'not_approved');
    const read = await http.get(`/v1/tool-calls/${call.id}`, agent);
    expect(read.body.status).toBe('expired');
    expect(read.body.execution).toBeUndefined();
  });
});

describe('a long-poll on a call that expires', () => {
  it('returns the call expired, well before its wait is over', async () => {
    const call = await pendingCall('exp-wait');
    const answer = await within(http.get(`/v1/tool-calls/${call.id}?wait=10`, agent), 5000);
    expect(answer).not.toBe('timer');
    expect((answer as Reply).status).toBe(200);
    expect((answer as Reply).body).toMatchObject({ id: call.id, status: 'expired', decision: { outcome: 'expired' } });
  });
});

describe('a rule with its own timeout', () => {
  it('expires the calls it holds after the rule timeoutSeconds, whatever the defaults', async () => {
    const tenant = 'exp-rule';
    const admin = await server.token('root', ['admin'], { tenant });
    const tAgent = await server.token('agent-e', ['agent'], { tenant });
    const put = await http.put('/v1/policy', admin, {
      defaults: { timeoutSeconds: 3600 },
      rules: [{ match: 'send_*', level: 'confirm', timeoutSeconds: 1 }],
    });
    expect(put.status).toBe(200);
    const call = await pendingCall('exp-rule-1', tAgent);
    const ms = Date.parse(call.approval.expiresAt) - Date.parse(call.createdAt);
    expect(ms).toBe(1000); // both stamped from the one clock reading of the proposal
    const { conv, call: after } = await pollConversationUntilSettled('exp-rule-1', call.id, tAgent);
    expect(after).toMatchObject({ status: 'expired', decision: { outcome: 'expired' } });
    expect(conv).toMatchObject({ status: 'active', pendingCount: 0 });
  });
});

describe('a call decided before its timeout', () => {
  it('stays decided: the sweeper does not expire it', async () => {
    const call = await pendingCall('exp-decided');
    const res = await http.post(`/v1/tool-calls/${call.id}/decision`, approver, { decision: 'approve' });
    expect(res.status).toBe(200);
    // Wait until well past expiresAt plus a sweep, then read it: still approved, and it runs.
    const past = Date.parse(call.approval.expiresAt) + 1500 - Date.now();
    if (past > 0) await new Promise((r) => setTimeout(r, past));
    const read = await http.get(`/v1/tool-calls/${call.id}`, agent);
    expect(read.body).toMatchObject({ status: 'approved', decision: { outcome: 'approved' } });
    expect((await http.post(`/v1/tool-calls/${call.id}/execution`, agent)).status).toBe(200);
  });
});
