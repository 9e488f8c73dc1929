/**
 * Web Push end to end: people subscribe browsers over REST; a held call reaches each person who may decide it on a
 * push service stand-in on loopback, which checks the VAPID signature and decrypts the message as a browser would
 * (test/support/push-service.ts); the notification's Approve token decides the call as that person `via: push`
 * while the agent's guard waits, and is spent; the outcome replaces the notification. Tokens for arguments someone
 * has since edited, endpoints the egress guard refuses, subscriptions the push service dropped, and other tenants'
 * subscriptions are each refused or kept apart.
 */
import { Tollgate } from '@tollgate/sdk';
import { Writable } from 'node:stream';
import { mintToken } from '../../src/infrastructure/auth/jwt-verifier';
import { loadConfig, TollgateConfig } from '../../src/infrastructure/config/config';
import { startServer } from '../../src/server';
import { tracked } from '../support/browser';
import { freshDatabase } from '../support/database';
import { client, Reply } from '../support/http';
import { BrowserSubscription, PushDelivery, PushServiceStandIn, startPushService } from '../support/push-service';
import { startTestServer, TEST_SECRET, TestServer } from '../support/server';
import { eventually, until } from '../support/wait';

let server: TestServer;
/** Every line the main server logged, at the most verbose level: no secret may be among them. */
const logs: string[] = [];
let http: ReturnType<typeof client>;
let push: PushServiceStandIn;
let agent: string;
let ann: string;
let bob: string;
let root: string;

const VAPID_SUBJECT = 'mailto:ops@example.com';

beforeAll(async () => {
  push = await startPushService();
  server = await startLoggedServer({ push: { subject: VAPID_SUBJECT } }, logs);
  http = client(server.url);
  agent = await server.token('deploy-bot', ['agent']);
  ann = await server.token('ann', ['approver'], { name: 'Ann' });
  bob = await server.token('bob', ['approver'], { name: 'Bob' });
  root = await server.token('root', ['admin'], { name: 'Root' });
  const policy = await http.put('/v1/policy', root, {
    rules: [
      { match: 'deploy', level: 'confirm', approvers: ['approver'] },
      { match: 'wire_money', level: 'confirm', approvers: ['approver'], quorum: 2 },
      { match: 'pk_wire', level: 'confirm', approvers: ['approver'], stepUp: 'passkey' },
      {
        match: 'night_deploy',
        level: 'confirm',
        approvers: ['approver'],
        escalate: [{ after: '1s', approvers: ['admin'], notify: ['push'] }],
      },
    ],
  });
  expect(policy.status).toBe(200);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await push?.close();
});

/** As startTestServer, with every log line kept in `into` (the support's server logs nowhere). */
async function startLoggedServer(overrides: Partial<TollgateConfig>, into: string[]): Promise<TestServer> {
  const db = await freshDatabase();
  const base = loadConfig({});
  const running = await startServer(
    {
      ...base,
      host: '127.0.0.1',
      port: 0,
      grpcPort: undefined,
      databaseUrl: db.url,
      dataDir: db.dataDir,
      auth: { secret: TEST_SECRET, devSecret: false },
      sweepIntervalMs: 200,
      rateLimitPer10s: 0,
      authFailuresPer10s: 0,
      webhooks: { ...base.webhooks, allowPrivate: ['127.0.0.0/8'] },
      instanceId: 'test',
      ...overrides,
    },
    {
      logLevels: ['verbose'],
      logDestination: new Writable({
        write(chunk: Buffer, _enc, next) {
          into.push(chunk.toString('utf8'));
          next();
        },
      }),
    },
  );
  return {
    ...running,
    db,
    token: (sub, roles, o = {}) =>
      mintToken(TEST_SECRET, { sub, roles, tenant: o.tenant, name: o.name, email: o.email }, o.ttl ?? '1h'),
    async stop() {
      await running.close();
      await db.drop();
    },
  };
}

/** Subscribes a new stand-in browser for the person; answers the browser and the API's view of it. */
async function subscribe(token: string, name: string): Promise<{ browser: BrowserSubscription; id: string }> {
  const browser = push.subscribe(name);
  const res = await http.post('/v1/me/push-subscriptions', token, { ...browser.toJSON(), userAgent: `${name} agent` });
  expect(res.status).toBe(201);
  return { browser, id: res.body.id };
}

/** The messages the stand-in decrypted for one browser about one call, of one kind. */
const messages = (name: string, toolCallId: string, kind: 'ask' | 'outcome'): PushDelivery[] =>
  push.deliveries.filter(
    (d) => d.path === `/push/${name}` && d.message?.toolCallId === toolCallId && d.message?.kind === kind,
  );

async function propose(convId: string, toolName: string, args: Record<string, unknown>, display?: unknown) {
  expect((await http.post('/v1/conversations', agent, { id: convId, user: { id: 'lee', name: 'Lee' } })).status).toBe(
    201,
  );
  const res = await http.post(`/v1/conversations/${convId}/tool-calls`, agent, {
    toolCalls: [{ toolName, arguments: args, ...(display ? { display } : {}) }],
  });
  expect(res.status).toBe(201);
  return res.body.toolCalls[0] as { id: string; status: string };
}

/** POSTs an action token as the service worker does. */
const act = (token: string): Promise<Reply> =>
  http.call('POST', `/act/${token}`, { headers: { accept: 'application/json' } });

const problem = (r: Reply) => ({ status: r.status, code: r.body?.code });

/**
 * Ann rejects the call from her notification and her outcome arrives: the channel tells outcomes after it has sent
 * every request of the call, so by then whatever was to be sent about it has been.
 */
async function settled(toolCallId: string): Promise<void> {
  const asked = await eventually(() => messages('ann-phone', toolCallId, 'ask')[0], 15_000, "ann's notification");
  expect((await act(asked.message.reject)).status).toBe(200);
  await eventually(() => messages('ann-phone', toolCallId, 'outcome')[0], 15_000, "ann's outcome");
}

let annPhone: { browser: BrowserSubscription; id: string };
let bobPhone: { browser: BrowserSubscription; id: string };

describe('subscribing', () => {
  it("gives people the server's VAPID key, and keeps a browser's subscription as its owner's", async () => {
    const key = await http.get('/v1/push/vapid-public-key', ann);
    expect(key.status).toBe(200);
    expect(Buffer.from(key.body.publicKey, 'base64url')).toHaveLength(65);
    annPhone = await subscribe(ann, 'ann-phone');
    bobPhone = await subscribe(bob, 'bob-phone');
    const list = await http.get('/v1/me/push-subscriptions', ann);
    expect(list.status).toBe(200);
    expect(list.body.subscriptions).toEqual([
      {
        id: annPhone.id,
        endpoint: annPhone.browser.endpoint,
        userAgent: 'ann-phone agent',
        createdAt: expect.any(String),
        lastSentAt: null,
        failures: 0,
      },
    ]);
    expect(JSON.stringify(list.body)).not.toContain(annPhone.browser.toJSON().keys.auth); // never its secret
    // The same browser again is the same subscription, its keys refreshed.
    const again = await http.post('/v1/me/push-subscriptions', ann, annPhone.browser.toJSON());
    expect({ status: again.status, id: again.body.id }).toEqual({ status: 201, id: annPhone.id });
  });

  it('refuses agents, bad keys, unknown fields and plain http to a public address, each with its code', async () => {
    const browser = push.subscribe('bad');
    const good = browser.toJSON();
    expect(problem(await http.post('/v1/me/push-subscriptions', agent, good))).toEqual({
      status: 403,
      code: 'forbidden',
    });
    expect(problem(await http.get('/v1/push/vapid-public-key', agent))).toEqual({ status: 403, code: 'forbidden' });
    const cases: Array<[unknown, string]> = [
      [{ ...good, keys: { ...good.keys, p256dh: Buffer.alloc(65, 4).toString('base64url') } }, 'keys.p256dh'],
      [{ ...good, keys: { ...good.keys, auth: 'c2hvcnQ' } }, 'keys.auth'],
      [{ ...good, keys: { ...good.keys, p256dh: 'not base64!' } }, 'keys.p256dh'],
      [{ ...good, endpoint: 'http://93.184.216.34/push/x' }, 'endpoint'],
      [{ ...good, endpoint: 'ftp://push.example.com/x' }, 'endpoint'],
      [{ ...good, endpoint: `https://user:pw@push.example.com/x` }, 'endpoint'],
      [{ ...good, extra: 1 }, 'extra'],
      [{ endpoint: good.endpoint }, 'keys'],
    ];
    for (const [body, path] of cases) {
      const res = await http.post('/v1/me/push-subscriptions', ann, body);
      expect({ path, status: res.status, code: res.body.code }).toEqual({
        path,
        status: 400,
        code: 'validation_failed',
      });
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
  });

  it('keeps tenants apart: another tenant lists none of yours and cannot remove one', async () => {
    const dora = await server.token('dora', ['approver', 'admin'], { tenant: 'other' });
    expect((await http.get('/v1/me/push-subscriptions', dora)).body.subscriptions).toEqual([]);
    expect(problem(await http.call('DELETE', `/v1/me/push-subscriptions/${annPhone.id}`, { token: dora }))).toEqual({
      status: 404,
      code: 'not_found',
    });
    // Nor can another person of the same tenant.
    expect(problem(await http.call('DELETE', `/v1/me/push-subscriptions/${annPhone.id}`, { token: bob }))).toEqual({
      status: 404,
      code: 'not_found',
    });
    expect((await http.get('/v1/me/push-subscriptions', ann)).body.subscriptions.map((s: any) => s.id)).toEqual([
      annPhone.id,
    ]);
  });
});

describe('deciding from a notification', () => {
  it("approves from the notification as the person, via push, while the agent's guard waits; a replay is refused", async () => {
    const sdk = new Tollgate({ url: server.url, token: agent });
    const conv = await sdk.conversation({ id: 'push-deploy', user: { id: 'lee', name: 'Lee' } });
    const deploy = conv.guard('deploy', async (args: { service: string }) => `deployed ${args.service}`, {
      display: (a) => ({ title: `Deploy ${a.service}`, summary: 'Ships the release branch to production' }),
    });
    const run = tracked(deploy({ service: 'billing' }));

    const asked = await eventually(
      () => push.deliveries.find((d) => d.path === '/push/ann-phone' && d.message?.kind === 'ask'),
      15_000,
      "ann's notification",
    );
    // As the push service saw it: signed with the server's VAPID key for this origin, sealed to ann's browser.
    const key = (await http.get('/v1/push/vapid-public-key', ann)).body.publicKey;
    expect(asked.vapid).toMatchObject({ key, claims: { aud: push.origin, sub: VAPID_SUBJECT } });
    expect(asked.headers).toMatchObject({ urgency: 'high', 'content-encoding': 'aes128gcm' });
    expect(Number(asked.headers.ttl)).toBeGreaterThan(0);
    expect(asked.headers.topic).toMatch(/^[A-Za-z0-9_-]{1,32}$/);
    const m = asked.message;
    expect(m).toMatchObject({
      v: 1,
      kind: 'ask',
      toolName: 'deploy',
      title: 'Deploy billing',
      approve: expect.any(String),
      reject: expect.any(String),
    });
    expect(m.body).toBe('Ships the release branch to production\ndeploy · deploy-bot for Lee\n{"service":"billing"}');
    expect(m.approveWithheld).toBeUndefined();
    // Bob may decide it too, and got his own tokens.
    const bobs = await eventually(() => messages('bob-phone', m.toolCallId, 'ask')[0], 10_000, "bob's notification");
    expect(bobs.message.approve).not.toBe(m.approve);
    expect(run.settled()).toBe(false);

    const used = await act(m.approve);
    expect(used.status).toBe(200);
    expect(used.body).toEqual({ outcome: 'approved', toolCallId: m.toolCallId, status: 'approved' });
    await expect(run.promise).resolves.toBe('deployed billing');
    const call = await http.get(`/v1/tool-calls/${m.toolCallId}`, root);
    expect(call.body.decision).toMatchObject({ outcome: 'approved', by: { id: 'ann', via: 'push' } });

    // Used again: refused as a replay. Its unused Reject now says how the call stands.
    const replay = await act(m.approve);
    expect(problem(replay)).toEqual({ status: 409, code: 'action_token_used' });
    const late = await act(m.reject);
    expect(problem(late)).toEqual({ status: 409, code: 'already_decided' });
    expect(late.body.detail).toMatch(/by Ann \(push\)/);
    // The outcome replaces the notification on both phones; the subscription records the send.
    for (const phone of ['ann-phone', 'bob-phone']) {
      const told = await eventually(() => messages(phone, m.toolCallId, 'outcome')[0], 10_000, `${phone} told`);
      expect(told.message).toMatchObject({
        title: 'Approved: Deploy billing',
        body: 'deploy · by Ann via a notification',
      });
      expect(told.message.approve).toBeUndefined();
    }
    const [mine] = (await http.get('/v1/me/push-subscriptions', ann)).body.subscriptions;
    expect(mine.lastSentAt).not.toBeNull();
    // Sent once each, though ann and bob are both reached by role and the outbox may redeliver.
    expect(messages('ann-phone', m.toolCallId, 'ask')).toHaveLength(1);
  });

  it('counts an approval towards a quorum from a notification, and refuses the same token again', async () => {
    const call = await propose('push-quorum-1', 'wire_money', { amount: 7, to: 'Initech' });
    const anns = await eventually(() => messages('ann-phone', call.id, 'ask')[0], 15_000, "ann's notification");
    const bobs = await eventually(() => messages('bob-phone', call.id, 'ask')[0], 15_000, "bob's notification");
    expect((await act(anns.message.approve)).body).toEqual({
      outcome: 'counted',
      toolCallId: call.id,
      status: 'pending',
    });
    expect(problem(await act(anns.message.approve))).toEqual({ status: 409, code: 'action_token_used' });
    expect((await act(bobs.message.approve)).body).toEqual({
      outcome: 'approved',
      toolCallId: call.id,
      status: 'approved',
    });
    const decided = (await http.get(`/v1/tool-calls/${call.id}`, root)).body;
    expect(decided.approval.quorum.approvedBy.map((a: { id: string; via: string }) => [a.id, a.via])).toEqual([
      ['ann', 'push'],
      ['bob', 'push'],
    ]);
  });

  it('refuses an Approve token for arguments another approver has since edited', async () => {
    const call = await propose('push-quorum', 'wire_money', { amount: 100, to: 'ACME' });
    const bobs = await eventually(() => messages('bob-phone', call.id, 'ask')[0], 15_000, "bob's notification");
    expect(bobs.message.body).toContain('0 of 2 approvals');
    const edited = await http.post(`/v1/tool-calls/${call.id}/decision`, ann, {
      decision: 'approve',
      arguments: { amount: 90, to: 'ACME' },
    });
    expect(edited.status).toBe(200);
    const refused = await act(bobs.message.approve);
    expect(problem(refused)).toEqual({ status: 409, code: 'arguments_changed' });
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await http.get(`/v1/tool-calls/${call.id}`, root)).body.status).toBe('pending');
  });

  it('offers no Approve where the rule wants a passkey or the arguments do not fit, only Reject and the card', async () => {
    const passkey = await propose('push-passkey', 'pk_wire', { amount: 5 });
    const longArgs = { notes: 'x'.repeat(400) };
    const long = await propose('push-long', 'deploy', longArgs);
    const a = await eventually(() => messages('ann-phone', passkey.id, 'ask')[0], 15_000, 'passkey call');
    expect(a.message).toMatchObject({ approveWithheld: 'passkey', reject: expect.any(String) });
    expect(a.message.approve).toBeUndefined();
    expect(a.message.body).toContain('Needs a passkey');
    const b = await eventually(() => messages('ann-phone', long.id, 'ask')[0], 15_000, 'long call');
    expect(b.message).toMatchObject({ approveWithheld: 'too_long' });
    expect(b.message.approve).toBeUndefined();
    expect(b.message.body).toContain(`Arguments too long to show here: ${JSON.stringify(longArgs).length} characters`);
    // Reject still works from the notification.
    expect((await act(b.message.reject)).body).toMatchObject({ outcome: 'rejected', status: 'rejected' });
    expect((await http.get(`/v1/tool-calls/${long.id}`, root)).body.decision.by).toMatchObject({
      id: 'ann',
      via: 'push',
    });
  });

  it('an escalation reaches the people it adds, once, and not those already asked', async () => {
    const rootPhone = await subscribe(root, 'root-phone');
    const call = await propose('push-escalate', 'night_deploy', { region: 'eu' });
    const escalated = await eventually(() => messages('root-phone', call.id, 'ask')[0], 20_000, 'the escalation');
    expect(escalated.message.body).toMatch(/^Escalated after 1 s without a decision/);
    expect(escalated.message.renotify).toBe(true);
    expect(messages('ann-phone', call.id, 'ask')).toHaveLength(1);
    expect((await act(escalated.message.approve)).body).toMatchObject({ outcome: 'approved' });
    expect(rootPhone.id).toMatch(/^ps_/);
  });

  it('forgets a subscription the push service says is gone (410)', async () => {
    const carl = await server.token('carl', ['approver'], { name: 'Carl' });
    await subscribe(carl, 'carl-phone');
    push.answer('carl-phone', 410);
    const call = await propose('push-gone', 'deploy', { service: 'search' });
    const gone = await eventually(() => messages('carl-phone', call.id, 'ask')[0], 15_000, "carl's notification");
    expect(gone.answered).toBe(410);
    await until(
      async () => (await http.get('/v1/me/push-subscriptions', carl)).body.subscriptions.length === 0,
      10_000,
      'the subscription forgotten',
    );
  });

  it('sends nothing to someone who turned push off in their notification settings', async () => {
    const dan = await server.token('dan', ['approver'], { name: 'Dan' });
    await subscribe(dan, 'dan-phone');
    expect((await http.put('/v1/me/notifications', dan, { push: 'off' })).status).toBe(200);
    const call = await propose('push-off', 'deploy', { service: 'docs' });
    await settled(call.id);
    expect(messages('dan-phone', call.id, 'ask')).toHaveLength(0);
  });

  it('lets a person remove their own subscription, after which nothing is sent to it', async () => {
    expect((await http.call('DELETE', `/v1/me/push-subscriptions/${bobPhone.id}`, { token: bob })).status).toBe(204);
    expect((await http.get('/v1/me/push-subscriptions', bob)).body.subscriptions).toEqual([]);
    const call = await propose('push-removed', 'deploy', { service: 'mail' });
    await settled(call.id);
    expect(messages('bob-phone', call.id, 'ask')).toHaveLength(0);
  });
});

describe('push on a server that may not reach private addresses, or has no VAPID subject', () => {
  let strict: TestServer;
  let off: TestServer;
  const offLogs: string[] = [];

  beforeAll(async () => {
    [strict, off] = await Promise.all([
      startTestServer({
        push: { subject: VAPID_SUBJECT },
        webhooks: { ...server.config.webhooks, allowPrivate: [] },
      }),
      startLoggedServer({ push: {} }, offLogs),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([strict?.stop(), off?.stop()]);
  });

  it('refuses a loopback endpoint at subscription, and at sending one that got in before', async () => {
    const api = client(strict.url);
    const eve = await strict.token('eve', ['approver'], { name: 'Eve' });
    const browser = push.subscribe('eve-phone');
    const refused = await api.post('/v1/me/push-subscriptions', eve, browser.toJSON());
    expect(problem(refused)).toEqual({ status: 400, code: 'validation_failed' });
    expect(refused.body.errors[0]).toMatchObject({
      path: 'endpoint',
      message: expect.stringContaining('TOLLGATE_WEBHOOK_ALLOW_PRIVATE'),
    });
    // One kept before the operator narrowed the allowlist: every send is checked again, and this one is not made.
    await strict.dataSource.query(
      `INSERT INTO push_subscriptions (tenant_id, person_id, id, endpoint, p256dh, auth, created_at)
       VALUES ('default', 'eve', 'ps_kept_before', $1, $2, $3, now())`,
      [browser.endpoint, browser.toJSON().keys.p256dh, browser.toJSON().keys.auth],
    );
    await api.put('/v1/policy', await strict.token('root', ['admin']), {
      rules: [{ match: 'deploy', level: 'confirm', approvers: ['approver'] }],
    });
    const bot = await strict.token('bot', ['agent']);
    expect((await api.post('/v1/conversations', bot, { id: 'strict-1' })).status).toBe(201);
    const res = await api.post('/v1/conversations/strict-1/tool-calls', bot, {
      toolCalls: [{ toolName: 'deploy', arguments: {} }],
    });
    expect(res.body.toolCalls[0].status).toBe('pending');
    await until(
      async () => (await api.get('/v1/me/push-subscriptions', eve)).body.subscriptions[0]?.failures === 1,
      15_000,
      'the send refused and counted',
    );
    expect(push.deliveries.filter((d) => d.path === '/push/eve-phone')).toEqual([]);
  });

  it('answers push_unavailable when there is no VAPID subject, and still lists none', async () => {
    const api = client(off.url);
    const fay = await off.token('fay', ['approver']);
    const browser = push.subscribe('fay-phone');
    expect(problem(await api.post('/v1/me/push-subscriptions', fay, browser.toJSON()))).toEqual({
      status: 503,
      code: 'push_unavailable',
    });
    expect(problem(await api.get('/v1/push/vapid-public-key', fay))).toEqual({ status: 503, code: 'push_unavailable' });
    expect((await api.get('/v1/me/push-subscriptions', fay)).body).toEqual({ subscriptions: [] });
  });
});

describe('secrets', () => {
  it("never logs nor answers the VAPID private key or a browser's auth secret", async () => {
    const [vapid] = await server.dataSource.query(`SELECT private_key FROM vapid_keys`);
    const secrets: string[] = [
      vapid.private_key,
      ...(await server.dataSource.query(`SELECT auth FROM push_subscriptions`)).map((r: { auth: string }) => r.auth),
    ];
    expect(secrets.length).toBeGreaterThan(2);
    expect(logs.length).toBeGreaterThan(20); // it did log: requests, sends, the subscription forgotten
    expect(logs.some((l) => l.includes('/v1/me/push-subscriptions'))).toBe(true);
    for (const secret of secrets) expect(logs.filter((l) => l.includes(secret))).toEqual([]);
    const answers = [
      await http.get('/v1/push/vapid-public-key', ann),
      await http.get('/v1/me/push-subscriptions', ann),
      await http.post('/v1/me/push-subscriptions', ann, annPhone.browser.toJSON()),
    ];
    for (const a of answers) for (const secret of secrets) expect(JSON.stringify(a.body)).not.toContain(secret);
  });
});
