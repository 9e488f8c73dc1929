/**
 * A stopped server keeps everything (CONTRACT §1): a pending approval, its audit trail and, in
 * embedded mode, the generated dev secret survive a clean restart on the same data dir (PGlite,
 * when DATABASE_URL is unset) or the same PostgreSQL database (when it is set).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { mintToken } from '../../src/infrastructure/auth/jwt-verifier';
import { loadConfig, TollgateConfig } from '../../src/infrastructure/config/config';
import { RunningServer, startServer } from '../../src/server';
import { freshDatabase, TestDatabase } from '../support/database';
import { client } from '../support/http';
import { TEST_SECRET } from '../support/server';

const GENESIS = '0'.repeat(64);

// Embedded PGlite starts cold twice or three times in this file.
jest.setTimeout(60_000);
const embedded = !process.env.DATABASE_URL;

let db: TestDatabase;
let config: TollgateConfig;
const running: RunningServer[] = [];

/** The same settings for both lives: embedded mode gets no secret, so the server makes (then finds) its dev secret. */
function configFor(d: TestDatabase): TollgateConfig {
  const base = loadConfig({});
  return {
    ...base,
    host: '127.0.0.1',
    port: 0,
    grpcPort: 0, // a free port too: 8081 may be taken by a server running beside the tests
    databaseUrl: d.url,
    dataDir: d.dataDir,
    auth: embedded ? { devSecret: false } : { secret: TEST_SECRET, devSecret: false },
    sweepIntervalMs: 200,
    instanceId: 'restart-test',
  };
}

async function boot(): Promise<RunningServer> {
  const s = await startServer(config, { logLevels: process.env.TEST_LOGS ? ['error', 'warn', 'log'] : false });
  running.push(s);
  return s;
}

async function shutDown(s: RunningServer): Promise<void> {
  await s.close();
  running.splice(running.indexOf(s), 1);
}

const eventsOf = (s: RunningServer, tenant: string) =>
  s.dataSource.query(
    `SELECT seq, id, type, at, conversation_id, tool_call_id, tool_name, actor, data, prev_hash, hash FROM events WHERE tenant_id = $1 ORDER BY seq`,
    [tenant],
  );

beforeAll(async () => {
  db = await freshDatabase();
  config = configFor(db);
});

afterAll(async () => {
  for (const s of [...running]) await s.close().catch(() => undefined);
  await db?.drop();
});

describe('a server stopped cleanly and started again on the same database', () => {
  const TENANT = 'restart';
  let first: {
    secret: string;
    callId: string;
    agentToken: string;
    call: Record<string, unknown>;
    conversation: Record<string, unknown>;
    events: Array<Record<string, unknown>>;
  };

  it('first records a pending call', async () => {
    const s = await boot();
    const secret = s.config.auth.secret!;
    expect(secret).toBeTruthy();
    if (embedded) {
      expect(s.config.auth.devSecret).toBe(true);
      expect(existsSync(join(db.dataDir, 'dev-jwt-secret'))).toBe(true);
    }
    const api = client(s.url);
    const agentToken = await mintToken(secret, { sub: 'agent-restart', roles: ['agent'], tenant: TENANT }, '1h');

    expect(
      (
        await api.post('/v1/conversations', agentToken, {
          id: 'conv-restart',
          title: 'survives',
          user: { id: 'u-1', roles: ['member'] },
          metadata: { k: [1, 2] },
        })
      ).status,
    ).toBe(201);
    const proposed = await api.post('/v1/conversations/conv-restart/tool-calls', agentToken, {
      toolCalls: [
        {
          id: 'call-restart',
          toolName: 'delete_source',
          arguments: { id: 'src_1' },
          reason: 'user asked',
          confidence: 0.9,
          display: { title: 'Delete source' },
        },
      ],
    });
    expect(proposed.status).toBe(201);
    const call = proposed.body.toolCalls[0];
    expect(call.status).toBe('pending');

    const conversation = (await api.get('/v1/conversations/conv-restart', agentToken)).body;
    const events = await eventsOf(s, TENANT);
    expect(events.map((e: { type: string }) => e.type)).toEqual([
      'ConversationStarted',
      'ToolCallProposed',
      'ApprovalRequested',
    ]);
    first = { secret, callId: call.id, agentToken, call, conversation, events };

    await shutDown(s);
    if (embedded) expect(existsSync(join(db.dataDir, 'pglite.lock'))).toBe(false);
  });

  it('keeps its signing secret (in embedded mode the generated dev secret), so tokens minted before the restart still work', async () => {
    const s = await boot();
    expect(s.config.auth.secret).toBe(first.secret);
    if (embedded) expect(s.config.auth.devSecret).toBe(true);
    const res = await client(s.url).get(`/v1/tool-calls/${first.callId}`, first.agentToken);
    expect(res.status).toBe(200);
  });

  it('keeps the pending call and its conversation exactly as they were', async () => {
    const s = running[0];
    const api = client(s.url);
    const call = await api.get(`/v1/tool-calls/${first.callId}`, first.agentToken);
    expect(call.body).toEqual(first.call);
    expect(call.body.status).toBe('pending');
    const conversation = await api.get('/v1/conversations/conv-restart', first.agentToken);
    expect(conversation.body).toEqual(first.conversation);
    expect(conversation.body.status).toBe('blocked');

    const approver = await mintToken(first.secret, { sub: 'alice', roles: ['approver'], tenant: TENANT }, '1h');
    const inbox = await api.get('/v1/approvals?status=pending', approver);
    expect(inbox.status).toBe(200);
    expect(inbox.body.items.map((i: { id: string }) => i.id)).toEqual([first.callId]);
  });

  it('keeps its events, byte for byte', async () => {
    expect(await eventsOf(running[0], TENANT)).toEqual(first.events);
  });

  it('lets the new instance decide the call, continuing the same chain', async () => {
    const s = running[0];
    const api = client(s.url);
    const approver = await mintToken(first.secret, { sub: 'alice', roles: ['approver'], tenant: TENANT }, '1h');

    const decided = await api.post(`/v1/tool-calls/${first.callId}/decision`, approver, {
      decision: 'approve',
      reason: 'after restart',
    });
    expect(decided.status).toBe(200);
    expect(decided.body.status).toBe('approved');
    expect(decided.body.decision).toMatchObject({ outcome: 'approved', by: { id: 'alice' }, reason: 'after restart' });

    // A replay of the original proposal still finds the same call: idempotency survived too.
    const replay = await api.post('/v1/conversations/conv-restart/tool-calls', first.agentToken, {
      toolCalls: [{ id: 'call-restart', toolName: 'delete_source', arguments: { id: 'src_1' } }],
    });
    expect(replay.status).toBe(200);
    expect(replay.body.toolCalls[0].id).toBe(first.callId);

    const events = await eventsOf(s, TENANT);
    expect(events.slice(0, first.events.length)).toEqual(first.events);
    expect(events.map((e: { type: string }) => e.type)).toEqual([
      'ConversationStarted',
      'ToolCallProposed',
      'ApprovalRequested',
      'ToolCallApproved',
    ]);
    expect(events.map((e: { seq: string }) => Number(e.seq))).toEqual([1, 2, 3, 4]);
    expect(events.map((e: { prev_hash: string }) => e.prev_hash)).toEqual([
      GENESIS,
      ...events.slice(0, -1).map((e: { hash: string }) => e.hash),
    ]);
  });

  it('keeps the decision through a second restart', async () => {
    await shutDown(running[0]);
    const s = await boot();
    const res = await client(s.url).get(`/v1/tool-calls/${first.callId}`, first.agentToken);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('approved');
    expect(res.body.decision).toMatchObject({ outcome: 'approved', by: { id: 'alice' } });
    const claim = await client(s.url).post(`/v1/tool-calls/${first.callId}/execution`, first.agentToken);
    expect(claim.status).toBe(200);
    expect(claim.body.arguments).toEqual({ id: 'src_1' });
    await shutDown(s);
  });
});
