/**
 * A rule's `notify` routes the calls it holds (and the FYIs of the calls it lets through at level notify) to the
 * channels it names: here email and Slack, both real enough (an SMTP server on loopback, Slack's Web API as a
 * stand-in). The inbox lists held calls whatever the rule says.
 */
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { SlackStandIn, startSlackStandIn } from '../support/slack-stand-in';
import { SmtpStandIn, startSmtpStandIn } from '../support/smtp-stand-in';
import { eventually } from '../support/wait';

let smtp: SmtpStandIn;
let slack: SlackStandIn;
let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let ann: string;

beforeAll(async () => {
  smtp = await startSmtpStandIn();
  slack = await startSlackStandIn();
  server = await startTestServer({
    outboxPollMs: 50,
    email: { smtpUrl: smtp.url, from: 'tollgate@example.com' },
    slack: {
      botToken: 'xoxb-routing',
      signingSecret: 'slack-signing-secret-routing-0123456789',
      channel: '#approvals',
      apiUrl: slack.url,
      tenant: 'default',
      people: {},
    },
  });
  http = client(server.url);
  agent = await server.token('bot', ['agent']);
  ann = await server.token('ann', ['approver'], { email: 'ann@example.com' });
  expect((await http.get('/v1/me', ann)).status).toBe(200);
  const policy = await http.put('/v1/policy', await server.token('root', ['admin']), {
    rules: [
      { match: 'by_mail', level: 'confirm', approvers: ['approver'], notify: ['email'] },
      { match: 'by_slack', level: 'confirm', approvers: ['approver'], notify: ['slack'] },
      { match: 'fyi_mail', level: 'notify', approvers: ['approver'], notify: ['email'] },
      { match: 'anything', level: 'confirm', approvers: ['approver'] },
    ],
  });
  expect(policy.status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
  await smtp?.close();
  await slack?.close();
});

let n = 0;
async function propose(toolName: string) {
  const conv = `nr-${++n}`;
  expect((await http.post('/v1/conversations', agent, { id: conv })).status).toBe(201);
  const r = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName, arguments: {} }],
  });
  return r.body.toolCalls[0] as { id: string; status: string; approval?: { notify?: string[] } };
}

const mailed = (id: string) => smtp.messages.some((m) => m.text?.includes(id));
const posted = (id: string) => slack.callsTo('chat.postMessage').some((c) => JSON.stringify(c.args).includes(id));

describe("a rule's notify", () => {
  it('asks on the channels it names only; the call shows them, and the inbox lists it anyway', async () => {
    const mail = await propose('by_mail');
    expect(mail.approval?.notify).toEqual(['email']);
    const other = await propose('anything');
    expect(other.approval?.notify).toBeUndefined();
    // Both channels have delivered what came after: the unrouted call reaches both.
    await eventually(() => (mailed(other.id) && posted(other.id) ? true : undefined), 10_000, 'both channels');
    expect(mailed(mail.id)).toBe(true);
    expect(posted(mail.id)).toBe(false);

    const viaSlack = await propose('by_slack');
    const after = await propose('anything');
    await eventually(() => (mailed(after.id) && posted(after.id) ? true : undefined), 10_000, 'both channels');
    expect(posted(viaSlack.id)).toBe(true);
    expect(mailed(viaSlack.id)).toBe(false);

    const inbox = (await http.get('/v1/approvals?status=pending&limit=100', ann)).body.items.map((c: any) => c.id);
    expect(inbox).toEqual(expect.arrayContaining([mail.id, viaSlack.id]));
  });

  it('sends a notify call’s FYI by email when the rule names email, with no link to decide', async () => {
    const fyi = await propose('fyi_mail');
    expect(fyi.status).toBe('approved');
    const mail = await eventually(() => smtp.messages.find((m) => m.text?.includes(fyi.id)), 10_000, 'FYI email');
    expect(mail.subject).toMatch(/^FYI: fyi_mail ran/);
    expect(mail.text).not.toMatch(/Approve:|Reject:/);
    expect(posted(fyi.id)).toBe(false);
  });
});
