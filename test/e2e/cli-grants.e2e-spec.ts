import { client } from '../support/http';
import { cliEnv, runCli } from '../support/pty';
import { startTestServer, TestServer } from '../support/server';

/** `tollgate grants`, `tollgate grants revoke` and `approve --always --expires-in`, as the built bin runs them. */
describe('tollgate grants (spawned CLI)', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let ann: string;
  let bea: string;
  let agent: string;
  const as = (token: string) => cliEnv({ url: server.url, token });

  beforeAll(async () => {
    server = await startTestServer();
    api = client(server.url);
    ann = await server.token('ann', ['admin'], { name: 'Ann' });
    bea = await server.token('bea', ['approver'], { name: 'Bea' });
    agent = await server.token('bot', ['agent']);
    expect((await api.put('/v1/policy', ann, { rules: [{ match: '*', level: 'confirm' }] })).status).toBe(200);
  });
  afterAll(async () => {
    await server.stop();
  });

  let n = 0;
  async function propose(toolName: string, conv = `cli-g-${++n}`): Promise<any> {
    await api.post('/v1/conversations', agent, { id: conv });
    const r = await api.post(`/v1/conversations/${conv}/tool-calls`, agent, {
      toolCalls: [{ toolName, arguments: {} }],
    });
    return r.body.toolCalls[0];
  }

  it('approve --always --expires-in makes a grant with that lifetime; grants lists it; grants revoke ends it', async () => {
    const call = await propose('send_email');
    const made = await runCli(['approve', call.id, '--always', 'tenant', '--expires-in', '2h', '--json'], as(ann));
    expect({ code: made.code, stderr: made.stderr }).toEqual({ code: 0, stderr: '' });

    const listed = await runCli(['grants', '--json'], as(bea));
    expect(listed.code).toBe(0);
    const [grant] = JSON.parse(listed.stdout).items;
    expect(grant).toMatchObject({
      toolName: 'send_email',
      scope: 'tenant',
      status: 'active',
      createdBy: { id: 'ann', via: 'cli' },
    });
    expect(Date.parse(grant.expiresAt) - Date.parse(grant.createdAt)).toBe(2 * 3600_000);

    const table = await runCli(['grants', '--tool', 'send_email'], as(bea));
    expect(table.stdout).toMatch(new RegExp(`${grant.id}\\s+send_email\\s+tenant\\s+active\\s+Ann`));

    // An approver may not revoke a tenant grant: refused, exit 1, and the grant stands.
    const refused = await runCli(['grants', 'revoke', grant.id], as(bea));
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(/^forbidden: Only an admin may revoke a grant in scope tenant/);

    const revoked = await runCli(['grants', 'revoke', grant.id, '--reason', 'too wide'], as(ann));
    expect(revoked.code).toBe(0);
    expect(revoked.stdout.trim()).toBe(`${grant.id} send_email (tenant): revoked by Ann via cli (too wide)`);
    expect((await propose('send_email')).status).toBe('pending');

    expect((await runCli(['grants'], as(bea))).stdout.trim()).toBe('No active grants.');
    const all = JSON.parse((await runCli(['grants', '--all', '--json'], as(bea))).stdout).items;
    expect(all).toEqual([
      expect.objectContaining({
        id: grant.id,
        status: 'revoked',
        revokeReason: 'too wide',
        revokedBy: { id: 'ann', name: 'Ann', via: 'cli' },
      }),
    ]);
  });

  it('refuses bad usage with exit 2, and an unknown grant with exit 1', async () => {
    const call = await propose('deploy');
    expect((await runCli(['approve', call.id, '--always', '--expires-in', 'soon'], as(ann))).code).toBe(2);
    expect((await runCli(['approve', call.id, '--always', '--expires-in', '91d'], as(ann))).code).toBe(2);
    expect((await runCli(['approve', call.id, '--expires-in', '1h'], as(ann))).code).toBe(2);
    expect((await runCli(['grants', '--status', 'forever'], as(ann))).code).toBe(2);
    const unknown = await runCli(['grants', 'revoke', 'grant_nope', '--json'], as(ann));
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ status: 404, code: 'not_found' });
    expect((await api.get(`/v1/tool-calls/${call.id}`, ann)).body.status).toBe('pending');
  });
});
