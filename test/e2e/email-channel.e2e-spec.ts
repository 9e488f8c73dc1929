/**
 * The email channel against a real SMTP server on loopback (smtp-server), followed as a person would: a held call
 * mails each person who may decide it; the Approve link opens a confirmation page (a scanner's GET or HEAD decides
 * nothing); the page's form approves it once, as that person, `via: email`; a replay, an expired or forged link,
 * a changed argument, a stale sign-in are each refused with a clear page (or problem, for JSON).
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { ParsedMail } from 'mailparser';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { SmtpStandIn, startSmtpStandIn } from '../support/smtp-stand-in';
import { eventually, until } from '../support/wait';

let smtp: SmtpStandIn;
let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let admin: string;
let ann: string;

beforeAll(async () => {
  smtp = await startSmtpStandIn();
  server = await startTestServer({
    outboxPollMs: 50,
    email: { smtpUrl: smtp.url, from: 'Tollgate <tollgate@example.com>' },
  });
  http = client(server.url);
  agent = await server.token('support-bot', ['agent']);
  admin = await server.token('root', ['admin'], { name: 'Root' });
  ann = await server.token('ann', ['approver'], { name: 'Ann', email: 'Ann@Example.com' });
  // Persons are on record from their own sign-ins: Ann and Dan may be mailed; Bob has no email; Carol no role to decide.
  for (const t of [
    ann,
    admin,
    await server.token('bob', ['approver'], { name: 'Bob' }),
    await server.token('carol', ['viewer'], { name: 'Carol', email: 'carol@example.com' }),
    await server.token('dan', ['approver'], { name: 'Dan', email: 'dan@example.com' }),
  ])
    expect((await http.get('/v1/me', t)).status).toBe(200);
  const policy = await http.put('/v1/policy', admin, {
    rules: [
      { match: 'wire_money', level: 'confirm', approvers: ['approver'] },
      { match: 'two_keys', level: 'confirm', approvers: ['approver', 'admin'], quorum: 2 },
    ],
  });
  expect(policy.status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
  await smtp?.close();
});

let n = 0;
async function propose(toolName: string, args: Record<string, unknown>) {
  const conv = `mail-${++n}`;
  expect((await http.post('/v1/conversations', agent, { id: conv, user: { id: 'u-erin', name: 'Erin' } })).status).toBe(
    201,
  );
  const res = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName, arguments: args, display: { title: 'Wire money', summary: 'Pay the supplier invoice' } }],
  });
  expect(res.status).toBe(201);
  expect(res.body.toolCalls[0].status).toBe('pending');
  return res.body.toolCalls[0] as { id: string };
}

function mailTo(address: string, toolCallId: string): Promise<ParsedMail> {
  return eventually(
    () =>
      smtp.messages.find((m) => m.text?.includes(toolCallId) && JSON.stringify(m.to).toLowerCase().includes(address)),
    15_000,
    `email to ${address} about ${toolCallId}`,
  );
}

function link(m: ParsedMail, label: 'Approve' | 'Reject'): string {
  const found = new RegExp(`^${label}: (\\S+)$`, 'm').exec(m.text ?? '');
  if (!found) throw new Error(`no ${label} link in:\n${m.text}`);
  return found[1];
}

const post = (url: string, opts: { json?: boolean; form?: string } = {}) =>
  fetch(url, {
    method: 'POST',
    headers: {
      ...(opts.json ? { accept: 'application/json' } : { accept: 'text/html' }),
      ...(opts.form !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    body: opts.form,
  });

describe('email to approvers', () => {
  it('mails each person who may decide, with the call and its links; approving by the link is Ann’s decision via email, once', async () => {
    const call = await propose('wire_money', { to: 'ACME GmbH', amount: 1200 });
    const mail = await mailTo('ann@example.com', call.id);
    expect(mail.subject).toContain('Wire money (wire_money)');
    expect(mail.from?.text).toContain('tollgate@example.com');
    expect(mail.headers.get('auto-submitted')).toBe('auto-generated');
    expect(mail.text).toContain('Pay the supplier invoice');
    expect(mail.text).toContain('"amount": 1200');
    expect(mail.text).toContain(`${server.url}/#/calls/${call.id}`);
    expect(mail.html).toContain('Approve…');
    await mailTo('dan@example.com', call.id);
    // Carol's role cannot decide it, Bob has no address on record: neither is mailed.
    await new Promise((r) => setTimeout(r, 300));
    const recipients = smtp.messages.filter((m) => m.text?.includes(call.id)).map((m) => JSON.stringify(m.to));
    expect(recipients).toHaveLength(2);
    expect(recipients.join()).not.toContain('carol');

    // A mail scanner follows the link: it sees a page, and nothing is decided.
    const approve = link(mail, 'Approve');
    const page = await fetch(approve);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('<form method="post"');
    expect(html).toContain('Approve as Ann');
    expect(html).toContain('ACME GmbH');
    expect((await fetch(approve, { method: 'HEAD' })).status).toBe(200);
    expect((await http.get(`/v1/tool-calls/${call.id}`, agent)).body.status).toBe('pending');
    // A scanner fetches the page as Ann would: no view is recorded (the decision is timed from the request).
    const views = await server.dataSource.query(`SELECT person_id FROM call_views WHERE call_id = $1`, [call.id]);
    expect(views).toEqual([]);

    // The agent waits; Ann presses the page's button.
    const waiting = http.get(`/v1/tool-calls/${call.id}?wait=20`, agent);
    const done = await post(approve, { form: '' });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('Approved: wire_money');
    const decided = await waiting;
    expect(decided.body.status).toBe('approved');
    expect(decided.body.decision).toMatchObject({ outcome: 'approved', by: { id: 'ann', via: 'email' } });

    // The same link again: refused, as a page and as a problem.
    const again = await post(approve);
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('This link was used already');
    const trail = await http.get(`/v1/audit/events?toolCallId=${call.id}`, admin);
    const approved = trail.body.events.find((e: any) => e.type === 'ToolCallApproved');
    expect(approved.actor).toMatchObject({ id: 'ann', kind: 'person', via: 'email' });
  });

  it('a replayed link is refused as used, even while the call still waits (quorum); the problem names the card', async () => {
    const call = await propose('two_keys', { door: 'vault' });
    const approve = link(await mailTo('ann@example.com', call.id), 'Approve');
    const first = await post(approve, { json: true });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ outcome: 'counted', toolCallId: call.id, status: 'pending' });
    const replay = await post(approve, { json: true });
    expect(replay.status).toBe(409);
    expect(replay.headers.get('content-type')).toContain('application/problem+json');
    expect(await replay.json()).toMatchObject({
      code: 'action_token_used',
      card: `${server.url}/#/calls/${call.id}`,
    });
    expect((await http.get(`/v1/tool-calls/${call.id}`, agent)).body.approval.quorum.approvedBy).toHaveLength(1);
  });

  it('two uses of one link at once: exactly one decides', async () => {
    const call = await propose('wire_money', { to: 'Race Ltd', amount: 1 });
    const reject = link(await mailTo('dan@example.com', call.id), 'Reject');
    const answers = await Promise.all([post(reject, { json: true }), post(reject, { json: true })]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const body = (await http.get(`/v1/tool-calls/${call.id}`, agent)).body;
    expect(body.status).toBe('rejected');
    expect(body.decision).toMatchObject({ by: { id: 'dan', via: 'email' }, reason: 'Rejected from an email' });
  });

  it('rejecting takes the reason typed on the page', async () => {
    const call = await propose('wire_money', { to: 'Typo Inc', amount: 99999 });
    const reject = link(await mailTo('ann@example.com', call.id), 'Reject');
    const page = await (await fetch(reject)).text();
    expect(page).toContain('name="reason"');
    const done = await post(reject, { form: 'reason=Wrong+amount%2C+should+be+999' });
    expect(done.status).toBe(200);
    expect((await http.get(`/v1/tool-calls/${call.id}`, agent)).body.decision).toMatchObject({
      outcome: 'rejected',
      reason: 'Wrong amount, should be 999',
    });
  });

  it('a link for arguments someone has since edited is refused, on the page and when posted', async () => {
    const call = await propose('two_keys', { door: 'front' });
    const approve = link(await mailTo('dan@example.com', call.id), 'Approve');
    const edited = await http.post(`/v1/tool-calls/${call.id}/decision`, admin, {
      decision: 'approve',
      arguments: { door: 'back' },
    });
    expect(edited.status).toBe(200);
    const page = await fetch(approve);
    expect(page.status).toBe(409);
    expect(await page.text()).toContain('The arguments have changed');
    const used = await post(approve, { json: true });
    expect(used.status).toBe(409);
    expect((await used.json()).code).toBe('arguments_changed');
    expect((await http.get(`/v1/tool-calls/${call.id}`, agent)).body.status).toBe('pending');
  });

  it('refuses a forged or truncated link, a form that is not one, and a person whose sign-in is too old', async () => {
    const call = await propose('wire_money', { to: 'Forge AG', amount: 5 });
    const approve = link(await mailTo('dan@example.com', call.id), 'Approve');
    const [head, payload, sig] = approve.split('/act/')[1].split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'bob' })).toString('base64url');
    // A key someone added to the database (or an old one from a backup) signs nothing that acts: only the active key.
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    await server.dataSource.query(
      `INSERT INTO signing_keys (kid, alg, private_jwk, public_jwk, created_at) VALUES ('planted', 'EdDSA', '{}', $1, now() - interval '1 year')`,
      [JSON.stringify(await exportJWK(publicKey))],
    );
    const planted = await new SignJWT({ ...claims, sub: 'bob' })
      .setProtectedHeader({ alg: 'EdDSA', kid: 'planted', typ: 'tollgate-action+jwt' })
      .sign(privateKey);
    for (const bad of [`${head}.${forged}.${sig}`, `${head}.${payload}`, 'not-a-token', planted]) {
      const r = await post(`${server.url}/act/${bad}`, { json: true });
      expect(r.status).toBe(400);
      expect((await r.json()).code).toBe('action_token_invalid');
    }
    const json = await fetch(approve, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: '{"decision":"approve"}',
    });
    expect(json.status).toBe(415);

    await server.dataSource.query(`UPDATE persons SET last_seen_at = now() - interval '30 days' WHERE id = 'dan'`);
    const stale = await post(approve, { json: true });
    expect(stale.status).toBe(403);
    expect((await stale.json()).code).toBe('stale_person');
    expect(
      (await http.get('/v1/me', await server.token('dan', ['approver'], { email: 'dan@example.com' }))).status,
    ).toBe(200);
    expect((await post(approve, { json: true })).status).toBe(200);
  });

  it('arguments too long to show whole are clipped, said so, and get no Approve link', async () => {
    const call = await propose('wire_money', { to: 'Long GmbH', memo: 'x'.repeat(6000) });
    const mail = await mailTo('ann@example.com', call.id);
    expect(mail.text).toMatch(/more characters not shown: open the card/);
    expect(mail.text).not.toMatch(/^Approve: /m);
    expect(mail.text).toContain('too long to show here in full');
    link(mail, 'Reject');
  });

  it('a send refused for good (5xx) is not retried and holds up nothing after it', async () => {
    smtp.refuseNext(1, 550, 'Ann@Example.com');
    const call = await propose('wire_money', { to: 'Bounce SA', amount: 4 });
    await mailTo('dan@example.com', call.id); // ann's was refused; dan's went after it
    const later = await propose('wire_money', { to: 'After SA', amount: 5 });
    await mailTo('ann@example.com', later.id);
    await mailTo('dan@example.com', later.id);
    expect(smtp.messages.filter((m) => m.text?.includes(call.id))).toHaveLength(1);
  });

  it('a refused send is retried: the message arrives once', async () => {
    smtp.refuseNext(1);
    const call = await propose('wire_money', { to: 'Retry BV', amount: 3 });
    await mailTo('ann@example.com', call.id);
    await mailTo('dan@example.com', call.id);
    await until(() => smtp.messages.filter((m) => m.text?.includes(call.id)).length >= 2, 15_000, 'both emails');
    await new Promise((r) => setTimeout(r, 1500));
    expect(smtp.messages.filter((m) => m.text?.includes(call.id))).toHaveLength(2);
  });
});
