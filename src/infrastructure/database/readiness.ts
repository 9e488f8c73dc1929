import type { DataSource } from 'typeorm';

/** How long each look at the database may take before readiness says no. */
const CHECK_TIMEOUT_MS = 2000;

export type Readiness = { ready: true } | { ready: false; reason: string };

/**
 * Whether this instance can serve: the database answers and every migration is applied. One definition for
 * GET /health/ready and grpc.health.v1.Health, so the two never disagree.
 */
export async function databaseReadiness(dataSource: DataSource): Promise<Readiness> {
  try {
    await withTimeout(dataSource.query('SELECT 1'));
    if (await withTimeout(dataSource.showMigrations()))
      return { ready: false, reason: 'migrations are pending: run `npm run migrate`' };
    return { ready: true };
  } catch (e) {
    return { ready: false, reason: (e as Error).message };
  }
}

function withTimeout<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<T>(
      (_, reject) =>
        (timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS)),
    ),
  ]).finally(() => clearTimeout(timer));
}
