/**
 * Reviewer quality (issue 28, part 9): GET /v1/audit/reviewers gives each person's decisions, approve rate and
 * time to decide, timed from when the server first showed them the card (GET of the one call, as the web card
 * fetches it when it opens; never the approvals list, which an open inbox polls), not from a client's claim; a
 * decision with no view recorded is timed from the request and counted in `unviewedShare`. GET /v1/audit/gaps finds
 * HITL-03 for a person who approves many calls within 2 s of seeing them. Two approvers: Quinn approves as soon as
 * each call arrives, never opening one; Cara lists her inbox, opens each call, takes her time, then decides. The
 * finding is Quinn's only, and stays inside the tenant.
 */
import { client } from '../support/http';
import { cliEnv, runCli } from '../support/pty';
import { startTestServer, TestServer } from '../support/server';

jest.setTimeout(120_000);

const TENANT = 'reviewers';
let server: TestServer;
let http: ReturnType<typeof client>;
let tokens: { admin: string; agent: string; quinn: string; cara: string; auditor: string; outsider: string };

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
  tokens = {
    admin: await server.token('root', ['admin'], { tenant: TENANT }),
    agent: await server.token('bot', ['agent'], { tenant: TENANT }),
    quinn: await server.token('quinn', ['approver'], { tenant: TENANT }),
    cara: await server.token('cara', ['approver'], { tenant: TENANT }),
    auditor: await server.token('audrey', ['auditor'], { tenant: TENANT }),
    outsider: await server.token('audrey', ['auditor'], { tenant: 'elsewhere' }),
  };
  const policy = { rules: [{ match: 'deploy', level: 'confirm', approvers: ['approver'] }] };
  expect((await http.put('/v1/policy', tokens.admin, policy)).status).toBe(200);
  expect((await http.post('/v1/conversations', tokens.agent, { id: 'ops' })).status).toBe(201);
});

afterAll(() => server?.stop());

async function propose(n: number, tag: string): Promise<string[]> {
  const res = await http.post('/v1/conversations/ops/tool-calls', tokens.agent, {
    toolCalls: Array.from({ length: n }, (_, i) => ({ toolName: 'deploy', arguments: { service: `${tag}-${i}` } })),
  });
  expect(res.status).toBe(201);
  for (const c of res.body.toolCalls) expect(c.status).toBe('pending');
  return res.body.toolCalls.map((c: { id: string }) => c.id);
}

async function decide(token: string, id: string, decision: 'approve' | 'reject'): Promise<void> {
  const res = await http.post(`/v1/tool-calls/${id}/decision`, token, { decision, reason: 'checked' });
  expect(res.status).toBe(200);
}

describe('GET /v1/audit/reviewers and HITL-03', () => {
  it('answers an empty window with no reviewers, and the documented thresholds', async () => {
    const r = await http.get('/v1/audit/reviewers', tokens.auditor);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      reviewers: [],
      truncated: false,
      thresholds: { quickMs: 2000, minApprovals: 10, minQuickShare: 0.5 },
    });
  });

  it('times each person from when they were shown the card: Quinn stamps, Cara reads first', async () => {
    // Cara's calls: she sees them in her inbox (the list: no view recorded), opens each, and decides after a while.
    const caras = await propose(11, 'cara');
    const viewsOf = async (person: string) =>
      (
        await server.dataSource.query(`SELECT call_id FROM call_views WHERE tenant_id = $1 AND person_id = $2`, [
          TENANT,
          person,
        ])
      ).map((v: { call_id: string }) => v.call_id);
    const listed = await http.get('/v1/approvals', tokens.cara);
    expect(listed.body.items.map((c: { id: string }) => c.id)).toEqual(expect.arrayContaining(caras));
    expect(await viewsOf('cara')).toEqual([]); // an open inbox is not a person reading each card
    for (const id of caras) expect((await http.get(`/v1/tool-calls/${id}`, tokens.cara)).status).toBe(200);
    expect((await viewsOf('cara')).sort()).toEqual([...caras].sort());
    await new Promise((r) => setTimeout(r, 2100)); // she reads each card for more than 2 s
    for (const id of caras.slice(0, 10)) await decide(tokens.cara, id, 'approve');
    await decide(tokens.cara, caras[10], 'reject');

    // Quinn's calls: approved the moment they arrive, never opened (his inbox lists them: still no view).
    const quinns = await propose(11, 'quinn');
    expect((await http.get('/v1/approvals', tokens.quinn)).status).toBe(200);
    for (const id of quinns.slice(0, 10)) await decide(tokens.quinn, id, 'approve');
    await decide(tokens.quinn, quinns[10], 'reject');

    const r = await http.get('/v1/audit/reviewers', tokens.auditor);
    expect(r.status).toBe(200);
    const [cara, quinn] = r.body.reviewers;
    expect(cara).toMatchObject({
      personId: 'cara',
      decisions: 11,
      approvals: 10,
      rejections: 1,
      quickDecisions: 0,
      quickApprovals: 0,
      rubberStamping: false,
      unviewedDecisions: 0,
      unviewedShare: 0,
    });
    expect(cara.approveRate).toBeCloseTo(10 / 11);
    expect(cara.medianDecideMs).toBeGreaterThanOrEqual(2000);
    expect(cara.p90DecideMs).toBeGreaterThanOrEqual(cara.medianDecideMs);
    expect(quinn).toMatchObject({
      personId: 'quinn',
      decisions: 11,
      approvals: 10,
      rejections: 1,
      rubberStamping: true,
      unviewedDecisions: 11, // no view recorded: timed from the request, and visible as such
      unviewedShare: 1,
    });
    expect(quinn.quickApprovals).toBeGreaterThanOrEqual(5);
  });

  it('lists HITL-03 among the gaps for Quinn only', async () => {
    const gaps = await http.get('/v1/audit/gaps', tokens.auditor);
    const stamping = gaps.body.findings.filter((f: { code: string }) => f.code === 'HITL-03');
    expect(stamping).toEqual([
      {
        code: 'HITL-03',
        severity: 'high',
        personId: 'quinn',
        detail: expect.stringMatching(/^quinn approved 10 call\(s\) in the window, \d+ \(\d+%\) within 2 s/),
      },
    ]);
  });

  it('tollgate audit reviewers shows the same, and marks the rubber-stamping (built CLI)', async () => {
    const env = cliEnv({ url: server.url, token: tokens.auditor });
    const r = await runCli(['audit', 'reviewers', '--since', '1d'], env);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^PERSON\s+DECISIONS\s+APPROVED\s+REJECTED\s+RATE\s+MEDIAN\s+P90\s+UNDER 2 S/);
    expect(lines.find((l) => l.startsWith('cara '))).toMatch(/^cara\s+11\s+10\s+1\s+91%\s+[\d.]+ s\s+[\d.]+ s\s+0\s*$/);
    expect(lines.find((l) => l.startsWith('quinn '))).toMatch(/^quinn\s+11\s+10\s+1\s+91%.*HITL-03 rubber-stamping\?$/);
    expect(r.stdout).toContain('HITL-03: 10 or more approvals, 50% or more of them within 2 s');
    const json = JSON.parse((await runCli(['audit', 'reviewers', '--json'], env)).stdout);
    expect(json.reviewers.map((p: { personId: string }) => p.personId)).toEqual(['cara', 'quinn']);
  });

  it('keeps to the window and the tenant, and answers approvers 403', async () => {
    const later = await http.get('/v1/audit/reviewers?from=2999-01-01', tokens.auditor);
    expect(later.body.reviewers).toEqual([]);
    const outside = await http.get('/v1/audit/reviewers', tokens.outsider);
    expect(outside.body.reviewers).toEqual([]);
    const outsideGaps = await http.get('/v1/audit/gaps', tokens.outsider);
    expect(outsideGaps.body.findings.filter((f: { code: string }) => f.code === 'HITL-03')).toEqual([]);
    expect((await http.get('/v1/audit/reviewers', tokens.quinn)).status).toBe(403);
    expect((await http.get('/v1/audit/reviewers?from=soon', tokens.auditor)).status).toBe(400);
  });
});
