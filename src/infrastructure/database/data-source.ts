import { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../../migrations';
import { databaseProblem } from '../config/startup-errors';
import { ORM_ENTITIES } from '../persistence/orm-entities';
import { QuestionRow } from '../persistence/question.orm-entity';
import { EmbeddedPostgres } from './embedded-postgres';

export interface DatabaseTarget {
  url?: string;
  /**
   * PostgreSQL itself when `url` is a pooler (TOLLGATE_DATABASE_DIRECT_URL): migrations run on a session of
   * their own there, not through a transaction-mode pooler. Unset or equal to `url`: everything uses `url`.
   */
  directUrl?: string;
  embedded?: EmbeddedPostgres;
}

/** One options builder for the server, the `migrate` command and the tests. Never `synchronize`. */
export function dataSourceOptions(target: DatabaseTarget): DataSourceOptions {
  const common = {
    type: 'postgres' as const,
    entities: [...ORM_ENTITIES, QuestionRow],
    migrations: MIGRATIONS,
    migrationsTableName: 'tollgate_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
  };
  if (target.url) {
    return {
      ...common,
      url: target.url,
      poolSize: 10,
      extra: { connectionTimeoutMillis: 5000, idleTimeoutMillis: 30000, onConnect: keepErrorsHandled },
    };
  }
  const e = target.embedded!;
  // PGlite serves one session at a time; a larger pool would only queue behind it.
  return {
    ...common,
    host: e.host,
    port: e.port,
    username: 'postgres',
    database: 'postgres',
    poolSize: 1,
    extra: { max: 1, connectionTimeoutMillis: 30000, onConnect: keepErrorsHandled },
  };
}

/**
 * A session the server ends (administrator command, restart) can emit `error` after its owner has
 * already released it and removed its listener; an `error` event nobody listens to kills the process.
 * The pool and TypeORM still see and handle the first error; this listener only keeps a late one from
 * crashing the service (requests then get 503 and the pool reconnects).
 */
function keepErrorsHandled(client: { on(event: 'error', listener: (e: Error) => void): unknown }): void {
  client.on('error', () => undefined);
}

export async function openDataSource(target: DatabaseTarget, migrate: boolean): Promise<DataSource> {
  if (migrate && target.url && target.directUrl && target.directUrl !== target.url) {
    try {
      await runMigrations({ url: target.directUrl });
    } catch (e) {
      throw databaseProblem(e, target.directUrl, 'TOLLGATE_DATABASE_DIRECT_URL') ?? e;
    }
    return openDataSource({ url: target.url }, false);
  }
  const ds = new DataSource(dataSourceOptions(target));
  await ds.initialize();
  if (migrate) await ds.runMigrations({ transaction: 'each' });
  return ds;
}

/** Applies the pending migrations on a data source of its own, closed afterwards; answers their names. */
export async function runMigrations(target: DatabaseTarget): Promise<string[]> {
  const ds = new DataSource({ ...dataSourceOptions(target), poolSize: 1 } as DataSourceOptions);
  await ds.initialize();
  try {
    return (await ds.runMigrations({ transaction: 'each' })).map((m) => m.name);
  } finally {
    await ds.destroy();
  }
}
