import { mintToken } from '../../src/infrastructure/auth/jwt-verifier';
import { loadConfig, TollgateConfig } from '../../src/infrastructure/config/config';
import { RunningServer, startServer } from '../../src/server';
import type { OutboxConsumer } from '../../src/application/ports/outbox.port';
import { freshDatabase, TestDatabase } from './database';

export const TEST_SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

export interface TestServer extends RunningServer {
  db: TestDatabase;
  token(
    sub: string,
    roles: string[],
    opts?: { tenant?: string; name?: string; email?: string; ttl?: string; owner?: string },
  ): Promise<string>;
  stop(): Promise<void>;
}

/** The real service on a fresh database and a free port, as a test sees it from outside. */
export async function startTestServer(
  overrides: Partial<TollgateConfig> = {},
  opts: { db?: TestDatabase; outboxConsumers?: OutboxConsumer[] } = {},
): Promise<TestServer> {
  // A shared database (several instances in one test) is dropped by its owner, not by each instance.
  const db = opts.db ?? (await freshDatabase());
  const base = loadConfig({});
  const config: TollgateConfig = {
    ...base,
    host: '127.0.0.1',
    port: 0,
    grpcPort: 0, // a free port too; `grpcPort: undefined` in overrides turns gRPC off
    databaseUrl: db.url,
    dataDir: db.dataDir,
    auth: { secret: TEST_SECRET, devSecret: false },
    sweepIntervalMs: 200,
    rateLimitPer10s: 0, // tests that are about rate limits turn it on
    authFailuresPer10s: 0, // suites that send many bad tokens must not trip it; tests about it turn it on
    maxWaitsPerToken: 100,
    // Test webhook receivers listen on loopback, which production refuses by default.
    webhooks: { ...base.webhooks, allowPrivate: ['127.0.0.0/8', '::1/128'] },
    instanceId: 'test',
    ...overrides,
  };
  const server = await startServer(config, {
    logLevels: process.env.TEST_LOGS ? ['error', 'warn', 'log'] : false,
    outboxConsumers: opts.outboxConsumers,
  });
  return {
    ...server,
    db,
    token: (sub, roles, opts = {}) =>
      mintToken(
        TEST_SECRET,
        { sub, roles, tenant: opts.tenant, name: opts.name, email: opts.email, owner: opts.owner },
        opts.ttl ?? '1h',
      ),
    async stop() {
      await server.close();
      if (!opts.db) await db.drop();
    },
  };
}
