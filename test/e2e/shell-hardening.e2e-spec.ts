/**
 * Shell commands that hid what they run, through HTTP on a real database: under `Bash(command=ls *): automatic`
 * and `Bash(command=rm *): deny`, an assignment, an output redirection, a run-changing variable or an expansion
 * that runs a value as code is never automatic; a standing grant on `ls *` covers none of them; and a simulation
 * too large to judge quickly is refused with a 400.
 */
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;

const POLICY = {
  rules: [
    { match: 'Bash(command=ls *)', level: 'automatic' },
    { match: 'Bash(command=rm *)', level: 'deny' },
  ],
};

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});

afterAll(async () => {
  await server?.stop();
});

/** A tenant with `policy`, and a way to propose one Bash call in a conversation of its own. */
async function tenant(name: string, policy: unknown) {
  let n = 0;
  const admin = await server.token('root', ['admin'], { tenant: name });
  const agent = await server.token('bot', ['agent'], { tenant: name });
  const auditor = await server.token('audrey', ['auditor'], { tenant: name });
  expect((await http.put('/v1/policy', admin, policy)).status).toBe(200);
  return {
    admin,
    auditor,
    async propose(command: string) {
      const conv = `${name}-${++n}`;
      expect((await http.post('/v1/conversations', agent, { id: conv, user: { id: 'rita', roles: [] } })).status).toBe(
        201,
      );
      const res = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
        toolCalls: [{ toolName: 'Bash', arguments: { command } }],
      });
      expect(res.status).toBe(201);
      return res.body.toolCalls[0];
    },
  };
}

describe('hidden execution under an allow rule, through HTTP', () => {
  let t: Awaited<ReturnType<typeof tenant>>;
  beforeAll(async () => {
    t = await tenant('shell-hardening', POLICY);
  });

  it.each([
    ["x='a[$(rm -rf ~)]'; ls $((x))"],
    ["x='$(rm -rf ~)'\nls ${x@P}"],
    ['PATH=/tmp/evil:$PATH; ls -la'],
    ['LD_PRELOAD=/tmp/evil.so ls -la'],
  ])('%j is rejected at the strictest level that could apply', async (command) => {
    const call = await t.propose(command);
    expect(call).toMatchObject({ status: 'rejected', policy: { level: 'deny', rule: 1 } });
    expect(call.policy.reason).toContain('could not be parsed safely');
  });

  it.each([
    ['ls -la > ~/.bashrc'],
    ['ls -la >> ~/.bashrc'],
    ['ls -la 2>&1 >/dev/sda'],
    ['ls -la > /dev/tcp/127.0.0.1/9'],
  ])('%j waits for a person: its redirection matches no rule', async (command) => {
    const call = await t.propose(command);
    expect(call).toMatchObject({ status: 'pending', policy: { level: 'confirm', rule: null } });
    expect(call.policy.reason).toMatch(/"redirect\(path=[^"]+\)" in command matches no rule/);
  });

  it('`ls -la` alone still runs by the allow rule', async () => {
    expect(await t.propose('ls -la')).toMatchObject({ status: 'approved', policy: { level: 'automatic', rule: 0 } });
  });
});

describe('standing grants on a shell tool, through HTTP', () => {
  it('a grant on `ls *` covers `ls -la /tmp` but not a redirection into authorized_keys', async () => {
    const t = await tenant('shell-hardening-grants', { rules: [{ match: 'Bash', level: 'confirm' }] });
    const first = await t.propose('ls /tmp');
    expect(first.status).toBe('pending');
    const decided = await http.post(`/v1/tool-calls/${first.id}/decision`, t.admin, {
      decision: 'always_allow',
      scope: 'tenant',
      args: { command: 'ls *' },
    });
    expect(decided.status).toBe(200);
    const granted = await t.propose('ls -la /tmp');
    expect(granted).toMatchObject({ status: 'approved', policy: { level: 'automatic' } });
    expect(granted.policy.reason).toMatch(/^Allowed by standing grant/);
    const redirected = await t.propose('ls -la > ~/.ssh/authorized_keys');
    expect(redirected).toMatchObject({ status: 'pending', policy: { level: 'confirm', rule: 0 } });
    expect(redirected.policy.reason).not.toMatch(/standing grant/);
  });
});

describe('simulating a candidate document, through HTTP', () => {
  const levels = ['automatic', 'notify', 'confirm', 'manual'];
  const rules = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ match: `Bash(command=*x${i}*)`, level: levels[i % 4] }));
  const command = Array.from({ length: 240 }, (_, i) => `c${i} a`).join('; ');

  it("refuses an auditor's 600 globs × 40 calls × 240-part commands with 400 validation_failed, naming calls", async () => {
    const t = await tenant('shell-hardening-sim', POLICY);
    const calls = Array.from({ length: 40 }, () => ({ toolName: 'Bash', arguments: { command } }));
    const res = await http.post('/v1/policy/simulate', t.auditor, { document: { rules: rules(600) }, calls });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: 'calls', message: expect.stringContaining('more than 500000') }],
    });

    const small = await http.post('/v1/policy/simulate', t.auditor, {
      document: { rules: rules(20) },
      calls: calls.slice(0, 4),
    });
    expect(small.status).toBe(200);
    expect(small.body.summary.total).toBe(4);
  });
});
