import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

/** A wake-up that never comes (a lost notification) costs latency, never correctness: the batch re-check answers. */
describe('long-polls whose wake-up is lost', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ longPollRecheckMs: 300 });
  });
  afterAll(() => server.stop());

  it('are answered by the periodic re-check when the call changed without telling anyone', async () => {
    const api = client(server.url);
    const agent = await server.token('bot', ['agent']);
    await api.post('/v1/conversations', agent, { id: 'lost' });
    const id = (
      await api.post('/v1/conversations/lost/tool-calls', agent, {
        toolCalls: [{ toolName: 'needs_person', arguments: {} }],
      })
    ).body.toolCalls[0].id;

    const poll = api.get(`/v1/tool-calls/${id}?wait=30`, agent).then((r) => r.body.status as string);
    await new Promise((r) => setTimeout(r, 300));
    // Behind the service's back: no event, no notification, no in-process wake.
    await server.dataSource.query(`UPDATE tool_calls SET status = 'rejected' WHERE id = $1`, [id]);

    let timer: NodeJS.Timeout | undefined;
    const answer = await Promise.race([
      poll,
      new Promise<string>((r) => (timer = setTimeout(() => r('still waiting half-way through the wait'), 15_000))),
    ]);
    clearTimeout(timer); // else Jest waits for it after the run
    expect(answer).toBe('rejected');
  }, 40_000);
});
