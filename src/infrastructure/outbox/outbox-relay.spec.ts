import { AuditEvent } from '../../application/ports/audit-log.port';
import { OutboxConsumer } from '../../application/ports/outbox.port';
import { client } from '../../../test/support/http';
import { startTestServer, TestServer } from '../../../test/support/server';

/** A way out with nothing to do for the tenants in `idle` (webhooks of a tenant without subscriptions). */
class SelectiveConsumer implements OutboxConsumer {
  readonly name = 'test-idle-aware';
  readonly delivered: AuditEvent[] = [];
  readonly idle = new Set<string>();
  asked = 0;

  wants(): boolean {
    return true;
  }

  async deliver(e: AuditEvent): Promise<void> {
    this.delivered.push(e);
  }

  async wantsNothingOf(tenantId: string): Promise<boolean> {
    this.asked += 1;
    return this.idle.has(tenantId);
  }
}

async function until(what: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A consumer that wanted nothing of a tenant at its last pass is not asked again after each commit of that
 * tenant; the timed pass asks, so it gets what comes after it wants something again.
 */
describe('the outbox relay and a consumer that wants nothing of a tenant', () => {
  let server: TestServer;
  const selective = new SelectiveConsumer();

  beforeAll(async () => {
    server = await startTestServer({ outboxPollMs: 3000 }, { outboxConsumers: [selective] });
  });
  afterAll(() => server.stop());

  it('runs no pass for it after each commit of that tenant, and still delivers once it wants something', async () => {
    const api = client(server.url);
    const agent = await server.token('bot', ['agent'], { tenant: 'calm' });
    selective.idle.add('calm');
    await api.post('/v1/conversations', agent, { id: 'c0' });
    await until(() => selective.asked > 0); // the first commit's pass: wants nothing, noted
    const before = selective.asked;
    // Commits further apart than the relay's coalescing window: each would have had a pass of its own.
    for (let i = 1; i <= 12; i++) {
      await api.post('/v1/conversations', agent, { id: `c${i}` });
      await sleep(60);
    }
    // Only the timed pass (every 3 s) asks; a pass per commit would have asked twelve times.
    expect(selective.asked - before).toBeLessThanOrEqual(3);
    expect(selective.delivered).toEqual([]);

    // The timed pass still moves the cursor to the head.
    const cursor = async () =>
      (
        await server.dataSource.query(
          `SELECT c.last_seq, h.seq AS head FROM outbox_cursors c JOIN audit_heads h USING (tenant_id) WHERE c.tenant_id = 'calm' AND c.consumer = $1`,
          [selective.name],
        )
      )[0] as { last_seq: string; head: string } | undefined;
    await until(async () => {
      const c = await cursor();
      return c !== undefined && c.last_seq === c.head;
    });

    // Wanted again: the timed pass finds it, and only what comes after reaches it.
    selective.idle.delete('calm');
    await api.post('/v1/conversations', agent, { id: 'c13' });
    await until(() => selective.delivered.some((e) => e.conversationId === 'c13'));
    expect(selective.delivered.map((e) => e.conversationId)).toEqual(['c13']);
  });
});
