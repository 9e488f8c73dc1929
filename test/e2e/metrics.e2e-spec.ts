import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

/** GET /metrics: Prometheus text an operator scrapes, no token (CONTRACT §11). */
describe('the Prometheus endpoint', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    server = await startTestServer();
    api = client(server.url);
  });
  afterAll(() => server.stop());

  function value(text: string, series: string): number {
    const line = text.split('\n').find((l) => l.startsWith(series + ' '));
    return line ? Number(line.slice(series.length + 1)) : 0;
  }

  it('counts decisions by outcome and channel, HTTP requests by route, and pending approvals by tenant', async () => {
    const agent = await server.token('bot', ['agent'], { tenant: 'metrics' });
    const ann = await server.token('ann', ['approver'], { tenant: 'metrics' });
    await api.post('/v1/conversations', agent, { id: 'm1' });
    const step = await api.post('/v1/conversations/m1/tool-calls', agent, {
      toolCalls: [
        { toolName: 'unknown_a', arguments: {} },
        { toolName: 'read_b', arguments: {}, annotations: { isReadOnly: true } },
        { toolName: 'unknown_c', arguments: {} },
      ],
    });
    expect(step.status).toBe(201);
    const [a, , c] = step.body.toolCalls;

    let text = (await api.get('/metrics')).body as string;
    expect(value(text, 'tollgate_pending_approvals{tenant="metrics"}')).toBe(2);
    expect(value(text, 'tollgate_decisions_total{outcome="approved",via="policy"}')).toBe(1);

    await api.post(`/v1/tool-calls/${a.id}/decision`, ann, { decision: 'approve' }, { 'X-Tollgate-Channel': 'web' });
    await api.post(`/v1/tool-calls/${c.id}/decision`, ann, { decision: 'reject', reason: 'no' }, { 'X-Tollgate-Channel': 'cli' });

    const res = await api.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    text = res.body as string;
    expect(value(text, 'tollgate_pending_approvals{tenant="metrics"}')).toBe(0);
    expect(value(text, 'tollgate_decisions_total{outcome="approved",via="web"}')).toBe(1);
    expect(value(text, 'tollgate_decisions_total{outcome="rejected",via="cli"}')).toBe(1);
    expect(value(text, 'tollgate_approval_latency_seconds_count{outcome="approved"}')).toBe(1);
    expect(value(text, 'tollgate_http_requests_total{method="POST",route="/v1/tool-calls/:id/decision",status="200"}')).toBe(2);
    expect(text).toMatch(/^process_resident_memory_bytes /m);
  });
});
