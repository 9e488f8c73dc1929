import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mintToken } from '../../src/infrastructure/auth/jwt-verifier';
import { startTestServer, TEST_SECRET, TestServer } from '../support/server';

/**
 * The README's curl tour, run as written (only the address changed) against a real server: a newcomer's first
 * steps must work, and must leave nothing behind in the checkout.
 */
const ROOT = join(__dirname, '..', '..');

export function tourScript(readme: string): string {
  const section = readme.slice(readme.indexOf('## A tour with curl'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('The README has no tour');
  return block[1];
}

describe('the README tour', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.stop());

  it('runs as written and tells the story it promises', async () => {
    const script = tourScript(readFileSync(join(ROOT, 'README.md'), 'utf8')).replaceAll(
      'http://127.0.0.1:8080',
      server.url,
    );
    const env = {
      ...process.env,
      TOLLGATE_JWT_SECRET: TEST_SECRET,
      TOLLGATE_URL: undefined,
      TOLLGATE_TOKEN: undefined,
      DATABASE_URL: undefined,
      // `npx tollgate` installs this checkout into npm's npx cache as a file: dependency, and that install runs its
      // `prepare` script, a whole `npm run build`, again (about 20 s of CPU): the build npm test made already serves.
      npm_config_ignore_scripts: 'true',
    };
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
      execFile(
        'bash',
        ['-c', `set -o pipefail\n${script}`],
        { cwd: ROOT, env, timeout: 120_000 },
        (err, stdout, stderr) =>
          err
            ? reject(Object.assign(err, { message: `${err.message}\n${stdout}\n${stderr}` }))
            : resolve({ stdout, stderr }),
      ),
    );
    if (process.env.SHOW_TOUR) console.log(stdout);
    expect(stderr).not.toMatch(/error|not found/i);
    const lines = stdout.split('\n');
    expect(lines).toContain('get_source: approved (Rule 0 (get_*): automatic)');
    expect(lines).toContain('delete_source: pending (Rule 2 (delete_source): confirm)');
    expect(stdout).toMatch(/'tc_\w+ delete_source for Ann'/);
    expect(stdout).toMatch(/outcome: 'approved',\s+by: \{ id: 'ann', via: 'cli', name: 'Ann' \}/);
    expect(lines).toContain('approved'); // what the agent's long-poll saw
    expect(stdout).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/m); // the receipt
    expect(stdout).toContain('"crv":"Ed25519"');
    expect(lines).toContain('completed');
    expect(lines).toContain('already_executed');
    expect(stdout).toMatch(/outcome: 'rejected',\s+by: \{ id: 'policy', via: 'policy' \}/);
    expect(stdout).toContain('"code":"validation_failed"');
    expect(stdout).toMatch(/"halted":true,"changed":true/);
    expect(stdout).toMatch(/"halted":false,"changed":true/);
    expect(lines).toContain("[ 'Ann via cli, policy v1 rule 2' ]");
    expect(stdout).toMatch(/\{"ok":true,"checked":\d+\}/);
    // The tour keeps its answers in a temporary directory, not in the checkout.
    expect(existsSync(join(ROOT, 'proposal.json')) || existsSync(join(ROOT, 'waited.json'))).toBe(false);
  }, 180_000);
  it("lets the role every sign-in hint suggests decide the tour's held call", async () => {
    // The start banner, the sign-in page, its dev sign-in form and the README's inbox section all suggest one role.
    const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');
    const hinted = [
      ...read('src/adapters/cli/server-commands.ts').matchAll(/\btoken --sub \w+ (?:--name \w+ )?--role (\w+)/g),
      ...read('web/src/ui/SignIn.tsx').matchAll(/tollgate token --sub \w+ --role (\w+)/g),
      ...read('README.md').matchAll(/\*\*Sign in\*\*[^`]*`npx tollgate token --sub \w+ --name \w+ --role (\w+)`/g),
    ].map((m) => m[1]);
    const formDefault = /useState<string\[\]>\(\[([^\]]*)\]\)/.exec(read('web/src/ui/SignIn.tsx'))?.[1];
    expect(hinted.length).toBeGreaterThanOrEqual(3);
    expect(new Set([...hinted, formDefault?.replace(/'/g, '')])).toEqual(new Set(['approver']));

    // The tour's policy, as written, then its held call: a person with that role sees it and may approve it.
    const policy = /PUT \$TG\/v1\/policy[^\n]*--data-binary '([^']*)'/.exec(tourScript(read('README.md')))![1];
    const tenant = 'hints';
    const token = (sub: string, roles: string[]) => mintToken(TEST_SECRET, { sub, roles, tenant });
    const call = async (method: string, path: string, who: string, body?: unknown, type = 'application/json') => {
      const r = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${who}`, 'content-type': type },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: r.status, body: (await r.json()) as any };
    };
    const [ann, agent, alice] = await Promise.all([
      token('ann', ['admin']),
      token('support-bot', ['agent']),
      token('alice', ['approver']),
    ]);
    expect((await call('PUT', '/v1/policy', ann, policy, 'application/yaml')).status).toBe(200);
    await call('PUT', '/v1/tools/delete_source', agent, {
      description: 'Delete a knowledge source',
      destructive: true,
    });
    const conv = await call('POST', '/v1/conversations', agent, { user: { id: 'ann', roles: ['admin'] } });
    const proposed = await call('POST', `/v1/conversations/${conv.body.id}/tool-calls`, agent, {
      toolCalls: [{ toolName: 'delete_source', arguments: { id: 'src_2' } }],
    });
    const id = proposed.body.toolCalls[0].id;
    expect(proposed.body.toolCalls[0].status).toBe('pending');
    expect((await call('GET', '/v1/approvals', alice)).body.items.map((c: { id: string }) => c.id)).toEqual([id]);
    expect((await call('POST', `/v1/tool-calls/${id}/decision`, alice, { decision: 'approve' })).status).toBe(200);
  });
});
