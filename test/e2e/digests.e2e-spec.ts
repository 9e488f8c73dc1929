/**
 * A person's notification settings (GET/PUT /v1/me/notifications) and the digests they lead to, against a real SMTP
 * server on loopback: hourly or daily digests instead of a message per call, quiet hours that hold messages until
 * they end, `off`. A digest lists what waits when it is sent, with each call's single-use links. Time passing is
 * made by moving a due digest's time to now in the database.
 */
import type { ParsedMail } from 'mailparser';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { SmtpStandIn, startSmtpStandIn } from '../support/smtp-stand-in';
import { eventually } from '../support/wait';

let smtp: SmtpStandIn;
let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let admin: string;
const people: Record<string, string> = {};

beforeAll(async () => {
  smtp = await startSmtpStandIn();
  server = await startTestServer({ outboxPollMs: 50, email: { smtpUrl: smtp.url, from: 'tollgate@example.com' } });
  http = client(server.url);
  agent = await server.token('bot', ['agent']);
  admin = await server.token('root', ['admin']);
  for (const name of ['ann', 'dan', 'cat', 'eve', 'bob']) {
    people[name] = await server.token(name, ['approver'], { name: name.toUpperCase(), email: `${name}@example.com` });
    expect((await http.get('/v1/me', people[name])).status).toBe(200);
  }
  expect(
    (await http.put('/v1/policy', admin, { rules: [{ match: '*', level: 'confirm', approvers: ['approver'] }] }))
      .status,
  ).toBe(200);
});

afterAll(async () => {
  await server?.stop();
  await smtp?.close();
});

let n = 0;
async function propose(args: Record<string, unknown> = {}) {
  const conv = `dg-${++n}`;
  expect((await http.post('/v1/conversations', agent, { id: conv })).status).toBe(201);
  const r = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName: 'deploy', arguments: { n, ...args }, display: { title: `Deploy #${n}` } }],
  });
  return r.body.toolCalls[0].id as string;
}

const mailsTo = (who: string) =>
  smtp.messages.filter((m) => JSON.stringify(m.to).toLowerCase().includes(`${who}@example.com`));
const mailAbout = (who: string, id: string) =>
  eventually(() => mailsTo(who).find((m) => m.text?.includes(id)), 10_000, `email to ${who} about ${id}`);

async function due(who: string): Promise<Date | undefined> {
  const [row] = await server.dataSource.query(
    `SELECT due_at FROM digests_due WHERE tenant_id = 'default' AND person_id = $1 AND channel = 'email'`,
    [who],
  );
  return row ? new Date(row.due_at) : undefined;
}

/** What the clock would do: the digest becomes due now. */
const makeDue = (who: string) =>
  server.dataSource.query(`UPDATE digests_due SET due_at = now() - interval '1 second' WHERE person_id = $1`, [who]);

describe('notification settings', () => {
  it('are the defaults until set, merge a PUT field by field, refuse bad fields and agents', async () => {
    expect((await http.get('/v1/me/notifications', people.eve)).body).toEqual({
      email: 'immediate',
      push: 'immediate',
      slack: 'off',
      dailyAt: '09:00',
      timeZone: 'UTC',
      quietHours: null,
    });
    const put = await http.put('/v1/me/notifications', people.eve, { email: 'off', timeZone: 'Europe/Berlin' });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ email: 'off', push: 'immediate', timeZone: 'Europe/Berlin' });
    expect((await http.get('/v1/me/notifications', people.eve)).body.email).toBe('off');
    const bad = await http.put('/v1/me/notifications', people.eve, { email: 'weekly', quietHours: { from: '7' } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
    expect(bad.body.errors.map((e: any) => e.path).sort()).toEqual(['email', 'quietHours']);
    expect((await http.get('/v1/me/notifications', agent)).status).toBe(403);
    expect((await http.put('/v1/me/notifications', agent, { email: 'off' })).status).toBe(403);
  });
});

describe('digests', () => {
  it('hourly: no email per call, a digest due at the next full hour listing what waits, with working links', async () => {
    expect((await http.put('/v1/me/notifications', people.ann, { email: 'hourly' })).status).toBe(200);
    const first = await propose();
    const second = await propose();
    await mailAbout('dan', second); // immediate people are mailed: delivery has happened
    expect(mailsTo('ann')).toHaveLength(0);
    const at = await due('ann');
    const nextHour = new Date(Date.now());
    nextHour.setUTCMinutes(0, 0, 0);
    nextHour.setUTCHours(nextHour.getUTCHours() + 1);
    expect(at?.getTime()).toBeLessThanOrEqual(nextHour.getTime());
    expect(at!.getTime()).toBeGreaterThan(Date.now());

    await makeDue('ann');
    const digest = await eventually(
      () => mailsTo('ann').find((m) => /calls wait for you/.test(m.subject ?? '')),
      10_000,
      'digest',
    );
    expect(digest.text).toContain(first);
    expect(digest.text).toContain(second);
    expect(digest.text).toContain('Deploy #');
    expect(await due('ann')).toBeUndefined();
    const approve = new RegExp(`Approve: (\\S+)\\n   Reject: \\S+\\n   Card: \\S+${first}`).exec(digest.text!)?.[1];
    expect(approve).toBeDefined();
    expect((await fetch(approve!, { method: 'POST', headers: { accept: 'application/json' } })).status).toBe(200);
    expect((await http.get(`/v1/tool-calls/${first}`, agent)).body.decision.by).toMatchObject({
      id: 'ann',
      via: 'email',
    });
  });

  it('quiet hours hold an immediate email until they end, then it comes as a digest', async () => {
    const hh = (d: Date) => d.toISOString().slice(11, 16);
    const from = new Date(Date.now() - 3600_000);
    const to = new Date(Date.now() + 3600_000);
    expect(
      (await http.put('/v1/me/notifications', people.cat, { quietHours: { from: hh(from), to: hh(to) } })).status,
    ).toBe(200);
    const id = await propose();
    await mailAbout('dan', id);
    expect(mailsTo('cat').filter((m) => m.text?.includes(id))).toHaveLength(0);
    const at = await due('cat');
    expect(at?.toISOString().slice(11, 16)).toBe(hh(to));
    await makeDue('cat');
    const digest = await eventually(
      () => mailsTo('cat').find((m) => m.text?.includes(id)),
      10_000,
      'digest after quiet hours',
    );
    expect(digest.subject).toMatch(/wait/);
  });

  it('off: nothing, and no digest', async () => {
    const id = await propose();
    await mailAbout('dan', id);
    expect(mailsTo('eve').filter((m) => m.text?.includes(id))).toHaveLength(0);
    expect(await due('eve')).toBeUndefined();
  });

  it('a digest whose calls were all decided meanwhile is not sent', async () => {
    expect((await http.put('/v1/me/notifications', people.bob, { email: 'daily' })).status).toBe(200);
    // Only bob may decide: the other approvers' digests would list it too, but nobody else is daily here.
    const ids = [await propose(), await propose()];
    await mailAbout('dan', ids[1]);
    expect(await due('bob')).toBeDefined();
    // Everything that waits is decided (ann's earlier call too), so nothing waits for bob.
    const waiting = (await http.get('/v1/approvals?status=pending&limit=100', people.bob)).body.items as Array<{
      id: string;
    }>;
    for (const c of waiting)
      expect(
        (await http.post(`/v1/tool-calls/${c.id}/decision`, people.dan, { decision: 'reject', reason: 'cleanup' }))
          .status,
      ).toBe(200);
    await makeDue('bob');
    await eventually(async () => ((await due('bob')) === undefined ? true : undefined), 10_000, 'digest taken');
    await new Promise((r) => setTimeout(r, 300));
    expect(mailsTo('bob').filter((m: ParsedMail) => /wait for you/.test(m.subject ?? ''))).toHaveLength(0);
  });
});
