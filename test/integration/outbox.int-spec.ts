import { AuditEvent } from '../../src/application/ports/audit-log.port';
import { OutboxConsumer } from '../../src/application/ports/outbox.port';
import { CONVERSATIONS, ConversationRepository, UNIT_OF_WORK, UnitOfWork } from '../../src/application/ports';
import { Conversation } from '../../src/domain/conversation/conversation.aggregate';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

/** A way out that records what it was given, and can be told to fail. */
class RecordingConsumer implements OutboxConsumer {
  readonly name = 'test-recorder';
  readonly delivered: AuditEvent[] = [];
  attempts = 0;
  failuresLeft = 0;

  wants(e: AuditEvent): boolean {
    return e.type !== 'ToolRegistered';
  }

  async deliver(e: AuditEvent): Promise<void> {
    this.attempts += 1;
    if (this.failuresLeft > 0) {
      this.failuresLeft -= 1;
      throw new Error('channel unavailable');
    }
    this.delivered.push(e);
  }
}

/** A way out with nothing to do for some tenants (as webhooks for a tenant without subscriptions). */
class SelectiveConsumer implements OutboxConsumer {
  readonly name = 'test-selective';
  readonly delivered: AuditEvent[] = [];
  readonly idle = new Set<string>();

  wants(): boolean {
    return true;
  }

  async deliver(e: AuditEvent): Promise<void> {
    this.delivered.push(e);
  }

  async wantsNothingOf(tenantId: string): Promise<boolean> {
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

/** The transactional outbox: delivered after commit, in order, retried with backoff, never for a rollback, never lost. */
describe('the outbox relay', () => {
  let server: TestServer;
  let consumer: RecordingConsumer;
  const selective = new SelectiveConsumer();
  let api: ReturnType<typeof client>;
  let agent: string;

  beforeAll(async () => {
    consumer = new RecordingConsumer();
    server = await startTestServer(
      { outboxPollMs: 100, outboxLeaseSeconds: 2 },
      { outboxConsumers: [consumer, selective] },
    );
    api = client(server.url);
    agent = await server.token('bot', ['agent'], { tenant: 'out' });
  });
  afterAll(() => server.stop());

  const delivered = (tenant: string) => consumer.delivered.filter((e) => e.tenant === tenant);

  it('delivers committed events after commit, in seq order, skipping what the consumer does not want', async () => {
    const admin = await server.token('root', ['admin'], { tenant: 'out' });
    await api.put('/v1/tools/t1', admin, {});
    await api.post('/v1/conversations', agent, { id: 'o1' });
    await api.post('/v1/conversations/o1/tool-calls', agent, { toolCalls: [{ toolName: 'x', arguments: {} }] });
    await until(() => delivered('out').length >= 3);
    expect(delivered('out').map((e) => e.type)).toEqual([
      'ConversationStarted',
      'ToolCallProposed',
      'ApprovalRequested',
    ]);
    const seqs = delivered('out').map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it('never delivers a change that rolled back', async () => {
    const uow = server.app.get<UnitOfWork>(UNIT_OF_WORK);
    const repo = server.app.get<ConversationRepository>(CONVERSATIONS);
    await expect(
      uow.run(async () => {
        await repo.save(Conversation.start({ id: 'ghost', tenantId: 'out', agentId: 'bot', at: new Date() }));
        throw new Error('abandon');
      }),
    ).rejects.toThrow('abandon');
    await api.post('/v1/conversations', agent, { id: 'o2' });
    await until(() => delivered('out').some((e) => e.conversationId === 'o2'));
    expect(consumer.delivered.some((e) => e.conversationId === 'ghost')).toBe(false);
  });

  it('retries a failing delivery with backoff and loses nothing', async () => {
    const before = delivered('out').length;
    const attemptsBefore = consumer.attempts;
    consumer.failuresLeft = 2;
    await api.post('/v1/conversations', agent, { id: 'o3' });
    await until(() => delivered('out').some((e) => e.conversationId === 'o3'), 20_000);
    expect(consumer.attempts - attemptsBefore).toBe(3); // two failures, then the delivery
    expect(delivered('out').length).toBe(before + 1);
    const cursor = async () =>
      (
        await server.dataSource.query(
          `SELECT attempts, last_error, next_attempt_at FROM outbox_cursors WHERE tenant_id = 'out' AND consumer = $1`,
          [consumer.name],
        )
      )[0];
    // The relay writes the cursor after the consumer returns: on a busy machine the delivery is seen first.
    await until(async () => (await cursor()).attempts === 0, 5_000).catch(() => undefined);
    expect(await cursor()).toMatchObject({ attempts: 0, last_error: null, next_attempt_at: null });
  });

  it('moves the cursor of a consumer that wants nothing of a tenant to the chain head, reading no events, unless another instance holds it', async () => {
    const quiet = await server.token('bot', ['agent'], { tenant: 'quiet' });
    selective.idle.add('quiet');
    await api.post('/v1/conversations', quiet, { id: 'q1' });
    await api.post('/v1/conversations', quiet, { id: 'q2' });
    const cursor = () =>
      server.dataSource.query(
        `SELECT c.last_seq, c.lease_owner, h.seq AS head FROM outbox_cursors c JOIN audit_heads h USING (tenant_id) WHERE c.tenant_id = 'quiet' AND c.consumer = $1`,
        [selective.name],
      );
    await until(async () => {
      const [c] = await cursor();
      return !!c && c.last_seq === c.head;
    });
    expect((await cursor())[0]).toMatchObject({ lease_owner: null });
    await until(() => delivered('quiet').length >= 2); // the other consumer still gets them
    expect(selective.delivered.filter((e) => e.tenant === 'quiet')).toEqual([]);

    // Wanted again: only what comes after reaches it.
    selective.idle.delete('quiet');
    await api.post('/v1/conversations', quiet, { id: 'q3' });
    await until(() => selective.delivered.some((e) => e.conversationId === 'q3'));
    expect(selective.delivered.filter((e) => e.tenant === 'quiet').map((e) => e.conversationId)).toEqual(['q3']);

    // A stream another instance holds is left alone, even when there is nothing to deliver. (First this
    // instance's pass over q3 ends: its cursor at the head, its lease given back.)
    await until(async () => {
      const [c] = await cursor();
      return c.last_seq === c.head && c.lease_owner === null;
    });
    selective.idle.add('quiet');
    await server.dataSource.query(
      `UPDATE outbox_cursors SET lease_owner = 'elsewhere', lease_until = now() + interval '1 hour' WHERE tenant_id = 'quiet' AND consumer = $1`,
      [selective.name],
    );
    const [held] = await cursor();
    await api.post('/v1/conversations', quiet, { id: 'q4' });
    await until(() => delivered('quiet').some((e) => e.conversationId === 'q4'));
    await new Promise((r) => setTimeout(r, 300)); // a few more passes
    expect((await cursor())[0]).toMatchObject({ last_seq: held.last_seq, lease_owner: 'elsewhere' });
  });

  it('takes over a stream whose lease a crashed instance left behind, once the lease runs out', async () => {
    const other = await server.token('bot', ['agent'], { tenant: 'leased' });
    await server.dataSource.query(
      `INSERT INTO outbox_cursors (tenant_id, consumer, lease_owner, lease_until) VALUES ('leased', $1, 'crashed-instance', now() + interval '2 seconds')`,
      [consumer.name],
    );
    await api.post('/v1/conversations', other, { id: 'l1' });
    await new Promise((r) => setTimeout(r, 500));
    expect(delivered('leased')).toEqual([]); // still leased to the crashed instance
    await until(() => delivered('leased').length === 1, 20_000);
    expect(delivered('leased')[0]).toMatchObject({ type: 'ConversationStarted', conversationId: 'l1' });
  });
});

/** A way out that takes as long as the test says: a channel whose far end is slow. */
class StuckConsumer implements OutboxConsumer {
  readonly name = 'test-stuck';
  private release!: () => void;
  private readonly gate = new Promise<void>((r) => (this.release = r));
  calls = 0;

  wants(): boolean {
    return true;
  }

  async deliver(): Promise<void> {
    this.calls += 1;
    await this.gate;
  }

  unstick(): void {
    this.release();
  }
}

describe('the outbox relay with a slow channel beside a quick one', () => {
  let server: TestServer;
  const quick = new RecordingConsumer();
  const stuck = new StuckConsumer();

  beforeAll(async () => {
    server = await startTestServer({ outboxPollMs: 100, outboxLeaseSeconds: 30 }, { outboxConsumers: [stuck, quick] });
  });
  afterAll(async () => {
    stuck.unstick();
    await server.stop();
  });

  it('delivers to the quick one while the slow one is still busy', async () => {
    const api = client(server.url);
    const agent = await server.token('bot', ['agent'], { tenant: 'slow' });
    await api.post('/v1/conversations', agent, { id: 's1' });
    await until(() => stuck.calls > 0);
    await api.post('/v1/conversations', agent, { id: 's2' });
    await until(() => quick.delivered.filter((e) => e.tenant === 'slow').length >= 2, 10_000);
    expect(stuck.calls).toBe(1); // still on its first event
  });
});
