import { client } from '../support/http';
import { cliEnv, runCli } from '../support/pty';
import { startTestServer, TestServer } from '../support/server';

/** `tollgate changes`, `changes approve` and `changes reject` (governance: four eyes), as the built bin runs them. */
describe('tollgate changes (spawned CLI)', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let ann: string;
  let bob: string;
  const as = (token: string) => cliEnv({ url: server.url, token });
  const GOVERNED = { governance: { quorum: 2 }, rules: [{ match: '*', level: 'confirm' }] };

  beforeAll(async () => {
    server = await startTestServer();
    api = client(server.url);
    ann = await server.token('ann', ['admin'], { name: 'Ann' });
    bob = await server.token('bob', ['admin'], { name: 'Bob' });
    expect((await api.put('/v1/policy', ann, GOVERNED)).status).toBe(200);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('lists a held policy change, refuses its proposer, and applies it on a second admin’s approval', async () => {
    const held = await api.put('/v1/policy', ann, { ...GOVERNED, rules: [] });
    expect(held.status).toBe(202);
    const id = held.body.pendingChange.id;

    const listed = await runCli(['changes'], as(bob));
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain('policy_update');
    expect(listed.stdout).toContain('1/2');

    const self = await runCli(['changes', 'approve', id], as(ann));
    expect(self.code).not.toBe(0);
    expect(self.stderr).toMatch(/another admin must approve it/);

    const approved = await runCli(['changes', 'approve', id, '--json'], as(bob));
    expect({ code: approved.code, stderr: approved.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(approved.stdout)).toMatchObject({ applied: true, change: { id, status: 'applied' } });
    expect((await api.get('/v1/policy', ann)).body.rules).toEqual([]);
  });

  it('rejects a held change with a reason', async () => {
    const held = await api.post('/v1/policy/rollback', ann, { version: 1 });
    expect(held.status).toBe(202);
    const id = held.body.pendingChange.id;
    const r = await runCli(['changes', 'reject', id, '--reason', 'not now'], as(bob));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toContain(`${id} policy_rollback: rejected by Bob (not now)`);
    expect((await runCli(['changes'], as(bob))).stdout).toContain('No pending changes.');
  });
});
