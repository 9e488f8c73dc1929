import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

/**
 * PostgreSQL goes down under load and comes back: while it is down Tollgate answers 503 (readiness red,
 * never an approval without a record); when it is back the same process serves again by itself.
 * Needs the local cluster this machine (and CI) runs at 127.0.0.1, managed with pg_ctlcluster as root.
 */
function localCluster(): string[] | null {
  const url = process.env.DATABASE_URL;
  if (!url || !['127.0.0.1', 'localhost'].includes(new URL(url).hostname)) return null;
  if (!existsSync('/usr/bin/pg_ctlcluster') || !existsSync('/etc/postgresql') || process.getuid?.() !== 0) return null;
  const version = readdirSync('/etc/postgresql').sort().pop();
  return version ? ['--skip-systemctl-redirect', version, 'main'] : null;
}

const cluster = localCluster();
const withLocalCluster = cluster ? describe : describe.skip;

withLocalCluster('PostgreSQL restarting under load', () => {
  let server: TestServer;
  const pg = (action: 'stop' | 'start') =>
    execFileSync('pg_ctlcluster', [...cluster!, action, ...(action === 'stop' ? ['-m', 'fast'] : [])], {
      stdio: 'pipe',
    });

  beforeAll(async () => {
    server = await startTestServer();
  });

  afterAll(async () => {
    try {
      pg('start');
    } catch {
      /* already running */
    }
    await server?.stop();
  });

  async function until(what: () => Promise<boolean>, ms = 60_000): Promise<void> {
    const end = Date.now() + ms;
    while (!(await what())) {
      if (Date.now() > end) throw new Error('condition not reached in time');
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('answers 503 while the database is down and recovers by itself when it is back', async () => {
    const api = client(server.url);
    const agent = await server.token('bot', ['agent']);
    const ann = await server.token('ann', ['approver']);
    await api.post('/v1/conversations', agent, { id: 'r1' });
    const pending = (
      await api.post('/v1/conversations/r1/tool-calls', agent, {
        toolCalls: [{ toolName: 'needs_person', arguments: {} }],
      })
    ).body.toolCalls[0].id;
    for (let i = 2; i <= 6; i++) await api.post('/v1/conversations', agent, { id: `r${i}` });

    // Load: proposals in a loop the whole time, recording every status.
    const statuses: number[] = [];
    let running = true;
    const load = (async () => {
      for (let n = 0; running; n++) {
        const r = await api
          .post(`/v1/conversations/r${2 + (n % 5)}/tool-calls`, agent, {
            toolCalls: [{ toolName: 'read', arguments: { n }, annotations: { isReadOnly: true } }],
          })
          .catch(() => ({ status: 0 }));
        statuses.push(r.status);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();

    await until(async () => statuses.filter((s) => s === 201).length >= 10);
    pg('stop');
    try {
      await until(async () => (await api.get('/health/ready')).status === 503);
      const decision = await api.post(`/v1/tool-calls/${pending}/decision`, ann, { decision: 'approve' });
      expect(decision.status).toBe(503);
      expect(decision.body.code).toBe('unavailable');
      await until(async () => statuses.slice(-3).every((s) => s === 503));
    } finally {
      pg('start');
    }
    await until(async () => (await api.get('/health/ready')).status === 200);
    const before = statuses.length;
    await until(async () => statuses.slice(before).filter((s) => s === 201).length >= 5);
    running = false;
    await load;

    // Never a 500 and never a dropped connection: only successes and 503s.
    expect(statuses.filter((s) => s !== 201 && s !== 503)).toEqual([]);
    // The decision refused while the database was down did not happen; now it does.
    expect((await api.get(`/v1/tool-calls/${pending}`, ann)).body.status).toBe('pending');
    expect((await api.post(`/v1/tool-calls/${pending}/decision`, ann, { decision: 'approve' })).status).toBe(200);
    const auditor = await server.token('audrey', ['auditor']);
    expect((await api.get('/v1/audit/verify', auditor)).body).toMatchObject({ ok: true });
  }, 180_000);
});
