/**
 * RUN-01 of the audit's gap findings: a run claimed long enough ago whose outcome never reached the trail (the
 * agent stopped before its report, which SDKs send in the background by default). The query on the real trail,
 * then the finding through `GET /v1/audit/gaps` once the server's clock has moved past the grace period.
 */
import { AUDIT_LOG, AuditLog } from '../../src/application/ports/audit-log.port';
import { CLOCK } from '../../src/application/ports';
import { RUN_WITHOUT_RESULT_AFTER_MS } from '../../src/application/queries/audit/audit.handlers';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
const TENANT = 'runs';
const ids: Record<string, string> = {};
let agent: string;
let auditor: string;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
  agent = await server.token('bot', ['agent'], { tenant: TENANT });
  auditor = await server.token('audrey', ['auditor'], { tenant: TENANT });
  const admin = await server.token('root', ['admin'], { tenant: TENANT });
  expect((await http.put('/v1/tools/get_x', admin, { isReadOnly: true })).status).toBe(201);
  expect((await http.post('/v1/conversations', agent, { id: 'r-1' })).status).toBe(201);
  const res = await http.post('/v1/conversations/r-1/tool-calls', agent, {
    claim: true,
    toolCalls: [
      { toolName: 'get_x', arguments: { n: 1 } },
      { toolName: 'get_x', arguments: { n: 2 } },
      { toolName: 'get_x', arguments: { n: 3 } },
    ],
  });
  expect(res.body.toolCalls.map((c: { status: string }) => c.status)).toEqual(['executed', 'executed', 'executed']);
  [ids.reported, ids.silent, ids.failed] = res.body.toolCalls.map((c: { id: string }) => c.id);
  await http.post(`/v1/tool-calls/${ids.reported}/result`, agent, { outcome: 'succeeded' });
  await http.post(`/v1/tool-calls/${ids.failed}/result`, agent, { outcome: 'failed', error: 'boom' });
});

afterAll(async () => {
  await server?.stop();
});

describe('AuditLog.runsWithoutResult', () => {
  const audit = () => server.app.get<AuditLog>(AUDIT_LOG);
  const later = () => new Date(Date.now() + 3_600_000);

  it('finds the claimed call whose outcome is not on record, and neither reported one (succeeded or failed)', async () => {
    const runs = await audit().runsWithoutResult(TENANT, later());
    expect(runs).toEqual([
      { toolCallId: ids.silent, toolName: 'get_x', seq: expect.any(Number), claimedAt: expect.any(Date) },
    ]);
  });

  it('leaves out runs claimed after the cut-off, and keeps to the window and the tenant', async () => {
    expect(await audit().runsWithoutResult(TENANT, new Date(Date.now() - 3_600_000))).toEqual([]);
    expect(await audit().runsWithoutResult(TENANT, later(), undefined, new Date('2000-01-01'))).toEqual([]);
    expect(await audit().runsWithoutResult('default', later())).toEqual([]);
  });
});

describe('GET /v1/audit/gaps', () => {
  const gaps = async () => (await http.get('/v1/audit/gaps', auditor)).body.findings as Array<{ code: string }>;

  it('says nothing of a run claimed moments ago (its report may still come), then reports it as RUN-01', async () => {
    expect((await gaps()).filter((f) => f.code === 'RUN-01')).toEqual([]);
    const clock = server.app.get(CLOCK);
    const now = clock.now.bind(clock);
    clock.now = () => new Date(now().getTime() + RUN_WITHOUT_RESULT_AFTER_MS + 1_000);
    try {
      expect((await gaps()).filter((f) => f.code === 'RUN-01')).toEqual([
        {
          code: 'RUN-01',
          severity: 'medium',
          toolName: 'get_x',
          toolCallId: ids.silent,
          detail: expect.stringContaining('no outcome is on record'),
        },
      ]);
    } finally {
      clock.now = now;
    }
  });
});
