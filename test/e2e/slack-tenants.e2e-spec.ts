/**
 * One Slack app for several tenants (TOLLGATE_SLACK_TENANTS): each tenant's requests go to its own channel; a click
 * acts in the tenant whose request the clicked message is, as the person the Slack user is there (a link naming the
 * tenant first). A click that names another tenant's call on a message is refused, and nothing is decided. Slack's
 * Web API is a stand-in.
 */
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { buttonClick, slackRequest, SlackStandIn, startSlackStandIn } from '../support/slack-stand-in';
import { eventually } from '../support/wait';

const SECRET = 'slack-signing-secret-tenants-0123456789';
/** Ann in acme, Anna in globex: one Slack user, a person in each tenant. */
const ANN = { id: 'U0ANN', name: 'ann' };

let slack: SlackStandIn;
let server: TestServer;
let http: ReturnType<typeof client>;
const agents: Record<string, string> = {};

beforeAll(async () => {
  slack = await startSlackStandIn();
  server = await startTestServer({
    outboxPollMs: 50,
    slack: {
      botToken: 'xoxb-tenants',
      signingSecret: SECRET,
      channel: 'C0ACME',
      tenant: 'acme',
      routes: { acme: 'C0ACME', globex: 'C0GLOBEX' },
      apiUrl: slack.url,
      people: {},
      tenantPeople: { acme: { [ANN.id]: 'ann' }, globex: { [ANN.id]: 'anna' } },
    },
  });
  http = client(server.url);
  for (const [tenant, person] of [
    ['acme', 'ann'],
    ['globex', 'anna'],
  ]) {
    agents[tenant] = await server.token('bot', ['agent'], { tenant });
    const admin = await server.token('root', ['admin'], { tenant });
    expect((await http.get('/v1/me', await server.token(person, ['approver'], { tenant }))).status).toBe(200);
    expect(
      (await http.put('/v1/policy', admin, { rules: [{ match: '*', level: 'confirm', approvers: ['approver'] }] }))
        .status,
    ).toBe(200);
  }
  // A tenant Slack does not serve.
  agents.initech = await server.token('bot', ['agent'], { tenant: 'initech' });
});

afterAll(async () => {
  await server?.stop();
  await slack?.close();
});

async function pending(tenant: string, conv: string) {
  expect((await http.post('/v1/conversations', agents[tenant], { id: conv })).status).toBe(201);
  const r = await http.post(`/v1/conversations/${conv}/tool-calls`, agents[tenant], {
    toolCalls: [{ toolName: 'deploy', arguments: { tenant } }],
  });
  expect(r.body.toolCalls[0].status).toBe('pending');
  return r.body.toolCalls[0].id as string;
}

const click = (callId: string, message: { channel: string; ts: string } | undefined) => {
  const { body, headers } = slackRequest(SECRET, buttonClick(ANN, 'tollgate_approve', callId, message));
  return http.call('POST', '/v1/slack/interactions', { raw: body, headers });
};

const messageAbout = (id: string) => eventually(() => slack.messageAbout(id), 10_000, `Slack message about ${id}`);

describe('one Slack app, several tenants', () => {
  it("posts each tenant's request to its channel and decides in the message's tenant as the person linked there", async () => {
    const acme = await pending('acme', 'a-1');
    const globex = await pending('globex', 'g-1');
    expect((await messageAbout(acme)).channel).toBe('C0ACME');
    expect((await messageAbout(globex)).channel).toBe('C0GLOBEX');

    expect((await click(globex, await messageAbout(globex))).status).toBe(200);
    const decided = await eventually(async () => {
      const c = (await http.get(`/v1/tool-calls/${globex}`, agents.globex)).body;
      return c.status === 'approved' ? c : undefined;
    });
    expect(decided.decision.by).toMatchObject({ id: 'anna', via: 'slack' });
    expect((await http.get(`/v1/tool-calls/${acme}`, agents.acme)).body.status).toBe('pending');
  });

  it('posts nothing for a tenant Slack does not serve', async () => {
    const initech = await pending('initech', 'i-1');
    const acme = await pending('acme', 'a-after-initech');
    await messageAbout(acme); // delivered after the initech request
    expect(slack.messageAbout(initech)).toBeUndefined();
  });

  it("refuses a click that names another tenant's call on a message, and one on a message Tollgate never posted", async () => {
    const acme = await pending('acme', 'a-2');
    const globex = await pending('globex', 'g-2');
    const before = slack.callsTo('chat.postEphemeral').length;
    // globex's message, acme's call id (a forged or replayed payload): it is not the message about that call.
    expect((await click(acme, await messageAbout(globex))).status).toBe(200);
    expect((await click(acme, { channel: 'C0ACME', ts: '1.000100' })).status).toBe(200);
    const told = await eventually(() => {
      const e = slack.callsTo('chat.postEphemeral').slice(before);
      return e.length >= 2 ? e : undefined;
    }, 15_000);
    for (const e of told) expect(String(e.args.text)).toContain('not the one Tollgate posted about this request');
    expect((await http.get(`/v1/tool-calls/${acme}`, agents.acme)).body.status).toBe('pending');
    expect((await http.get(`/v1/tool-calls/${globex}`, agents.globex)).body.status).toBe('pending');
  });
});
