/**
 * The ApprovalCallback port driven from the outbox: each channel is asked when a call waits for a person and
 * told how the request ended (approved, rejected, expired, cancelled), under its own cursor, retried when it
 * fails, never for what no person was asked about.
 */
import { ApprovalChannelBridge } from '../../src/application/channels/approval-channel-bridge';
import type {
  ApprovalCallback,
  ApprovalOutcome,
  ApprovalRequest,
} from '../../src/application/ports/approval-callback.port';
import { CONVERSATIONS, ConversationRepository } from '../../src/application/ports';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { eventually, until } from '../support/wait';

/** A channel that records what it is asked and told, and can be made to fail. */
class RecordingChannel implements ApprovalCallback {
  readonly channel = 'recording';
  readonly asked: ApprovalRequest[] = [];
  readonly told: ApprovalOutcome[] = [];
  failuresLeft = 0;

  async ask(r: ApprovalRequest): Promise<void> {
    this.maybeFail();
    this.asked.push(r);
  }

  async tell(o: ApprovalOutcome): Promise<void> {
    this.maybeFail();
    this.told.push(o);
  }

  private maybeFail(): void {
    if (this.failuresLeft > 0) {
      this.failuresLeft -= 1;
      throw new Error('channel down');
    }
  }
}

let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let admin: string;
const channel = new RecordingChannel();

beforeAll(async () => {
  // The bridge reads through the running app's repository, which exists only once the server is up.
  const conversations: Pick<ConversationRepository, 'findByToolCallId'> = {
    findByToolCallId: (...args) => server.app.get<ConversationRepository>(CONVERSATIONS).findByToolCallId(...args),
  };
  server = await startTestServer(
    { outboxPollMs: 100, sweepIntervalMs: 100 },
    { outboxConsumers: [new ApprovalChannelBridge(channel, conversations)] },
  );
  http = client(server.url);
  agent = await server.token('bot', ['agent']);
  admin = await server.token('root', ['admin'], { name: 'Root' });
  await http.put('/v1/policy', admin, {
    rules: [
      { match: 'quick', level: 'confirm', timeoutSeconds: 1 },
      { match: 'forbidden', level: 'deny' },
      { match: 'get_*', level: 'automatic' },
    ],
  });
});

afterAll(() => server.stop());

let n = 0;
async function propose(toolName: string, token = agent) {
  const conv = `bridge-${++n}`;
  await http.post('/v1/conversations', token, { id: conv, user: { id: 'u-erin', name: 'Erin' }, title: 'Bridge test' });
  const res = await http.post(`/v1/conversations/${conv}/tool-calls`, token, {
    toolCalls: [{ toolName, arguments: { n } }],
  });
  expect(res.status).toBe(201);
  return res.body.toolCalls[0];
}

const askedAbout = (id: string) => channel.asked.find((r) => r.id === id);
const toldAbout = (id: string) => channel.told.filter((o) => o.toolCall.id === id);

it('asks with the call and its conversation when a call waits for a person', async () => {
  const call = await propose('delete_source');
  const asked = await eventually(() => askedAbout(call.id));
  expect(asked).toMatchObject({
    tenantId: 'default',
    id: call.id,
    toolName: 'delete_source',
    status: 'pending',
    approval: { approvers: expect.any(Array), expiresAt: expect.any(String) },
    conversation: {
      id: call.conversationId,
      agentId: 'bot',
      user: { id: 'u-erin', name: 'Erin' },
      title: 'Bridge test',
    },
  });
});

it.each([
  ['approved', { decision: 'approve', reason: 'fine' }],
  ['rejected', { decision: 'reject', reason: 'no' }],
])('tells who %s it, where and why', async (outcome, body) => {
  const call = await propose('delete_source');
  await eventually(() => askedAbout(call.id));
  await http.post(`/v1/tool-calls/${call.id}/decision`, admin, body, { 'X-Tollgate-Channel': 'web' });
  const [told] = await eventually(() => (toldAbout(call.id).length ? toldAbout(call.id) : undefined));
  expect(told).toMatchObject({
    tenantId: 'default',
    outcome,
    by: { id: 'root', name: 'Root', via: 'web' },
    reason: body.reason,
    toolCall: { id: call.id, status: outcome },
  });
});

it('tells when the request expires', async () => {
  const call = await propose('quick');
  const [told] = await eventually(() => (toldAbout(call.id).length ? toldAbout(call.id) : undefined), 8000);
  expect(told).toMatchObject({ outcome: 'expired', toolCall: { status: 'expired' } });
});

it('tells when a halt cancels the request, but not when it cancels an approved call', async () => {
  const pending = await propose('delete_source');
  const approved = await propose('delete_source');
  await eventually(() => askedAbout(approved.id));
  await http.post(`/v1/tool-calls/${approved.id}/decision`, admin, { decision: 'approve' });
  await until(() => toldAbout(approved.id).length === 1);
  for (const c of [pending, approved]) {
    expect(
      (await http.post('/v1/halt', admin, { scope: 'conversation', id: c.conversationId, reason: 'drill' })).status,
    ).toBe(200);
  }
  const [told] = await eventually(() => (toldAbout(pending.id).length ? toldAbout(pending.id) : undefined));
  expect(told).toMatchObject({ outcome: 'cancelled', reason: 'drill', by: { id: 'root', via: 'api' } });
  await new Promise((r) => setTimeout(r, 300));
  expect(toldAbout(approved.id).map((o) => o.outcome)).toEqual(['approved']);
});

it('neither asks nor tells about calls no person was asked about', async () => {
  const denied = await propose('forbidden');
  const auto = await propose('get_thing');
  expect([denied.status, auto.status]).toEqual(['rejected', 'approved']);
  const marker = await propose('delete_source');
  await eventually(() => askedAbout(marker.id));
  expect(askedAbout(denied.id) ?? askedAbout(auto.id)).toBeUndefined();
  expect([...toldAbout(denied.id), ...toldAbout(auto.id)]).toEqual([]);
});

it('retries a failing channel and loses nothing, in order', async () => {
  channel.failuresLeft = 2;
  const call = await propose('delete_source');
  await http.post(`/v1/tool-calls/${call.id}/decision`, admin, { decision: 'approve' });
  await eventually(() => (toldAbout(call.id).length ? true : undefined), 15_000);
  expect(channel.asked.filter((r) => r.id === call.id)).toHaveLength(1);
  expect(channel.asked.findIndex((r) => r.id === call.id)).toBeGreaterThanOrEqual(0);
  expect(toldAbout(call.id)).toHaveLength(1);
}, 20_000);

it("keeps tenants' requests apart, each tagged with its tenant", async () => {
  const other = await server.token('bot', ['agent'], { tenant: 'other' });
  const call = await propose('delete_source', other);
  expect((await eventually(() => askedAbout(call.id))).tenantId).toBe('other');
});
