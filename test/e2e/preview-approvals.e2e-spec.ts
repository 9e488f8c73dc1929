/**
 * A preview is approved only where it was shown whole (the receipt's `preview` claim says it was): a call with a
 * long diff gets no Approve in Slack nor an Approve link by email, a forged Slack Approve click is refused
 * (preview_not_shown) and the call still waits, while the card (REST) approves it. A short preview keeps them all.
 * Slack's Web API and SMTP are stand-ins on loopback.
 */
import type { ParsedMail } from 'mailparser';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import {
  buttonClick,
  SLACK_CHANNEL_ID,
  slackRequest,
  SlackStandIn,
  startSlackStandIn,
} from '../support/slack-stand-in';
import { SmtpStandIn, startSmtpStandIn } from '../support/smtp-stand-in';
import { eventually } from '../support/wait';

const PUBLIC_URL = 'https://tollgate.example.com';
const SIGNING_SECRET = 'slack-signing-secret-for-previews-0123456';
const APPROVER = { id: 'U0APPROVER', name: 'ann-on-slack' };
const LONG_DIFF = Array.from({ length: 1200 }, (_, i) => `+config line ${i}`).join('\n');

let slack: SlackStandIn;
let smtp: SmtpStandIn;
let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let ann: string;

beforeAll(async () => {
  slack = await startSlackStandIn();
  smtp = await startSmtpStandIn();
  server = await startTestServer({
    outboxPollMs: 100,
    publicUrl: PUBLIC_URL,
    email: { smtpUrl: smtp.url, from: 'Tollgate <tollgate@example.com>' },
    slack: {
      botToken: 'xoxb-previews',
      signingSecret: SIGNING_SECRET,
      channel: '#approvals',
      apiUrl: slack.url,
      tenant: 'default',
      people: { [APPROVER.id]: 'ann' },
    },
  });
  http = client(server.url);
  agent = await server.token('deploy-bot', ['agent']);
  ann = await server.token('ann', ['approver'], { name: 'Ann', email: 'ann@example.com' });
  expect((await http.get('/v1/me', ann)).status).toBe(200);
  const root = await server.token('root', ['admin']);
  expect(
    (await http.put('/v1/policy', root, { rules: [{ match: 'deploy', level: 'confirm', approvers: ['approver'] }] }))
      .status,
  ).toBe(200);
});

afterAll(async () => {
  await server?.stop();
  await slack?.close();
  await smtp?.close();
});

let n = 0;
async function propose(content: string): Promise<string> {
  const conv = `preview-${++n}-${Math.random().toString(36).slice(2, 8)}`;
  expect((await http.post('/v1/conversations', agent, { id: conv })).status).toBe(201);
  const r = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName: 'deploy', arguments: { env: 'prod' }, preview: { kind: 'diff', content } }],
  });
  expect(r.status).toBe(201);
  expect(r.body.toolCalls[0].status).toBe('pending');
  return r.body.toolCalls[0].id;
}

async function slackMessage(id: string): Promise<{ actions: string[]; text: string; ts: string }> {
  const c = await eventually(
    () => slack.callsTo('chat.postMessage').find((x) => JSON.stringify(x.args).includes(id)),
    10_000,
    `the request for ${id} posted to Slack`,
  );
  const blocks = typeof c.args.blocks === 'string' ? JSON.parse(c.args.blocks) : c.args.blocks;
  const ts = await eventually(async () => {
    const rows = await server.dataSource.query(`SELECT ts FROM slack_messages WHERE tool_call_id = $1`, [id]);
    return rows.length ? (rows[0].ts as string) : undefined;
  });
  return {
    actions: blocks
      .flatMap((b: any) => b.elements ?? [])
      .map((e: any) => e.action_id)
      .filter(Boolean),
    text: JSON.stringify(blocks),
    ts,
  };
}

function mail(id: string): Promise<ParsedMail> {
  return eventually(() => smtp.messages.find((m) => m.text?.includes(id)), 15_000, `email about ${id}`);
}

const statusOf = async (id: string) => (await http.get(`/v1/tool-calls/${id}`, ann)).body.status;

describe('a preview is approved only where it was shown whole', () => {
  it('a long diff: no Approve in Slack or by email, a forged Slack Approve is refused, the card approves', async () => {
    const id = await propose(LONG_DIFF);
    const m = await slackMessage(id);
    expect(m.actions).toEqual(['tollgate_reject']);
    expect(m.text).toContain('tollgate_preview_not_shown');
    expect(m.text).toContain(`${PUBLIC_URL}/#/calls/${id}`);

    const email = await mail(id);
    expect(email.text).not.toMatch(/^Approve: /m);
    expect(email.text).toMatch(/^Reject: /m);
    expect(email.text).toContain("cannot show the call's preview whole");

    const { body, headers } = slackRequest(
      SIGNING_SECRET,
      buttonClick(APPROVER, 'tollgate_approve', id, { channel: SLACK_CHANNEL_ID, ts: m.ts }),
    );
    expect((await http.call('POST', '/v1/slack/interactions', { raw: body, headers })).status).toBe(200);
    const refused = await eventually(() =>
      slack
        .callsTo('chat.postEphemeral')
        .find((c) => c.args.user === APPROVER.id && /preview_not_shown/.test(c.args.text)),
    );
    expect(refused.args.text).toMatch(/not shown whole through slack/);
    expect(await statusOf(id)).toBe('pending');

    // The card shows it whole: approving there is Ann's decision.
    const approved = await http.post(`/v1/tool-calls/${id}/decision`, ann, { decision: 'approve' });
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('approved');
  });

  it('a short diff keeps Approve in Slack and by email, and its link page shows the preview', async () => {
    const id = await propose('-replicas: 2\n+replicas: <3>');
    const m = await slackMessage(id);
    expect(m.actions).toContain('tollgate_approve');
    const email = await mail(id);
    const approve = /^Approve: (\S+)$/m.exec(email.text ?? '')?.[1];
    expect(approve).toBeDefined();
    const page = await fetch(approve!.replace(PUBLIC_URL, server.url), { headers: { accept: 'text/html' } });
    const html = await page.text();
    expect(html).toContain('+replicas: &lt;3&gt;');
    expect(html).toContain('class="approve"');
  });

  it('refuses a preview with a bidirectional control at proposal, naming preview.content', async () => {
    const conv = `preview-bidi-${Math.random().toString(36).slice(2, 8)}`;
    expect((await http.post('/v1/conversations', agent, { id: conv })).status).toBe(201);
    const r = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
      toolCalls: [{ toolName: 'deploy', arguments: {}, preview: { kind: 'text', content: 'rm \u202eftxt.exe' } }],
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
    expect(r.body.errors).toEqual([expect.objectContaining({ path: 'toolCalls[0].preview.content' })]);
  });
});
