/**
 * A call that names people (`person:ann`) mentions their linked Slack users in its Slack message, so Slack notifies
 * exactly them; a call for a role mentions no one. Slack's Web API is a stand-in.
 */
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { SlackStandIn, startSlackStandIn } from '../support/slack-stand-in';
import { eventually } from '../support/wait';

let slack: SlackStandIn;
let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  slack = await startSlackStandIn();
  server = await startTestServer({
    outboxPollMs: 50,
    slack: {
      botToken: 'xoxb-assignees',
      signingSecret: 'slack-signing-secret-assignees-0123456789',
      channel: '#approvals',
      apiUrl: slack.url,
      tenant: 'default',
      people: { U0ANN: 'ann', U0BOB: 'bob' },
    },
  });
  http = client(server.url);
  agent = await server.token('bot', ['agent']);
  const root = await server.token('root', ['admin']);
  // Ann and Bob have signed in: their person records exist (Ann by her email too).
  tokens.ann = await server.token('ann', ['viewer'], { email: 'ann@example.com' });
  tokens.bob = await server.token('bob', ['approver']);
  for (const t of Object.values(tokens)) expect((await http.get('/v1/me', t)).status).toBe(200);
  expect(
    (
      await http.put('/v1/policy', root, {
        rules: [
          { match: 'pay_*', level: 'confirm', approvers: ['person:Ann@Example.com'] },
          { match: '*', level: 'confirm', approvers: ['approver'] },
        ],
      })
    ).status,
  ).toBe(200);
});

afterAll(async () => {
  await server?.stop();
  await slack?.close();
});

async function posted(toolName: string, conv: string) {
  expect((await http.post('/v1/conversations', agent, { id: conv })).status).toBe(201);
  const res = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName, arguments: {} }],
  });
  expect(res.status).toBe(201);
  const id = res.body.toolCalls[0].id as string;
  return eventually(
    () => slack.callsTo('chat.postMessage').find((c) => String(c.args.text).includes(id)),
    10_000,
    `Slack message for ${id}`,
  );
}

describe('named people in Slack', () => {
  it('mentions the Slack user linked to the person a call names, and no one for a role', async () => {
    const named = await posted('pay_invoice', 'c-named');
    expect(String(named.args.text)).toMatch(/^<@U0ANN>: Approval needed: pay_invoice/);
    expect(JSON.stringify(named.args.blocks)).toContain('*For* <@U0ANN>');
    expect(JSON.stringify(named.args.blocks)).not.toContain('U0BOB');

    const role = await posted('deploy', 'c-role');
    expect(String(role.args.text)).toMatch(/^Approval needed: deploy/);
    expect(JSON.stringify(role.args.blocks)).not.toContain('<@');
  });
});

describe('direct messages', () => {
  const dmsTo = (user: string) => slack.callsTo('chat.postMessage').filter((c) => c.args.channel === user);

  it('go to people who ask for them, one per call, with the card link and no buttons; none by default', async () => {
    expect((await http.put('/v1/me/notifications', tokens.ann, { slack: 'immediate' })).status).toBe(200);
    const channel = await posted('pay_rent', 'c-dm-1');
    const id = /\((tc_[^)]+)\)/.exec(String(channel.args.text))![1];
    const dm = await eventually(
      () => dmsTo('U0ANN').find((c) => String(c.args.text).includes(id)),
      10_000,
      'DM to ann',
    );
    expect(String(dm.args.text)).toContain(`/#/calls/${id}`);
    expect(dm.args.blocks).toBeUndefined();
    // Bob may decide deploys but asked for no direct messages.
    const deploy = await posted('deploy', 'c-dm-2');
    const deployId = /\((tc_[^)]+)\)/.exec(String(deploy.args.text))![1];
    await new Promise((r) => setTimeout(r, 300));
    expect(dmsTo('U0BOB').filter((c) => String(c.args.text).includes(deployId))).toHaveLength(0);
  });

  it('an hourly digest lists what waits, when it is due', async () => {
    expect((await http.put('/v1/me/notifications', tokens.bob, { slack: 'hourly' })).status).toBe(200);
    const deploy = await posted('deploy', 'c-dm-3');
    const id = /\((tc_[^)]+)\)/.exec(String(deploy.args.text))![1];
    await eventually(
      async () =>
        (await server.dataSource.query(`SELECT 1 FROM digests_due WHERE person_id = 'bob' AND channel = 'slack'`))
          .length
          ? true
          : undefined,
      10_000,
      'digest due',
    );
    await server.dataSource.query(
      `UPDATE digests_due SET due_at = now() - interval '1 second' WHERE person_id = 'bob'`,
    );
    const digest = await eventually(
      () => dmsTo('U0BOB').find((c) => /wait for you/.test(String(c.args.text))),
      10_000,
      'digest DM',
    );
    expect(String(digest.args.text)).toContain(`/#/calls/${id}`);
  });
});
