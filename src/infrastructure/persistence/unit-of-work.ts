import { TransactionRequired } from '../../application/ports/call-usage.port';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { EventBus } from '@nestjs/cqrs';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';
import { DomainEvent } from '../../domain/shared/domain-event';
import { UnitOfWork, UnitOfWorkOptions } from '../../application/ports';
import { EventsCommitted, StoredEvent } from '../../application/ports/stored-event';
import { TOLLGATE_CONFIG, TollgateConfig } from '../config/config';
import { EventStore } from './event-store';
import { KeyedQueue } from './keyed-queue';

interface Scope {
  manager: EntityManager;
  /** Events collected for the end of the unit (aggregates whose repository does not append them itself). */
  events: DomainEvent[];
  /** Events already appended, in a repository's own statement. */
  stored: StoredEvent[];
  /** No transaction: plain reads, then one atomic statement that checks versions (see UnitOfWorkOptions). */
  optimistic: boolean;
  writes: number;
}

/** Thrown when an aggregate changed since it was loaded (0 rows matched `WHERE version = :v`). */
export class StaleAggregateError extends Error {}

/** 40001 also comes from `tollgate_expect`: a statement that found its aggregate's version moved on. */
const RETRYABLE_PG_CODES = new Set(['40001', '40P01', '23505']);
const MAX_ATTEMPTS = 4;

/**
 * One transaction per command, carried through AsyncLocalStorage so repositories never share a
 * QueryRunner across requests. Events collected during the work are appended to the hash-chained
 * trail at the end, inside the same transaction, and published in-process only after commit.
 */
@Injectable()
export class TypeOrmUnitOfWork implements UnitOfWork {
  private readonly als = new AsyncLocalStorage<Scope>();
  private readonly log = new Logger('UnitOfWork');
  private readonly exclusive = new KeyedQueue();

  constructor(
    private readonly dataSource: DataSource,
    private readonly eventStore: EventStore,
    @Inject(EventBus) private readonly eventBus: EventBus,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
  ) {}

  /** The transaction's manager inside a unit of work, else the pool's (plain reads). */
  manager(): EntityManager {
    return this.als.getStore()?.manager ?? this.dataSource.manager;
  }

  /** True inside a unit of work that holds a transaction (row locks mean something there). */
  get inTransaction(): boolean {
    const scope = this.als.getStore();
    return !!scope && !scope.optimistic;
  }

  /** On PostgreSQL, optimistic saves of one tenant share statements and commits (the embedded database is one session). */
  get groupCommits(): boolean {
    return !!this.config.databaseUrl;
  }

  /** True inside any unit of work: loaded aggregates belong to this command alone. */
  get inUnitOfWork(): boolean {
    return !!this.als.getStore();
  }

  /**
   * Runs one of the hot path's statements as a named prepared statement: PostgreSQL parses and plans it once
   * per connection instead of on every call (planning was as costly as running these). In this unit's
   * transaction when it has one, else on the pool. On PostgreSQL only (see below); behind a pooler in
   * transaction mode this needs protocol-level prepared statements (PgBouncer ≥ 1.21). Errors come back as TypeORM's QueryFailedError, as from
   * `manager().query`.
   */
  async prepared<T>(text: string, params: unknown[]): Promise<T[]> {
    // The embedded database is one session behind a socket that outlives pg's clients: a statement a
    // discarded client prepared would still exist there. It is a development database; plan every time.
    // Behind a transaction-mode pooler without prepared-statement support, the operator turns them off.
    if (!this.config.databaseUrl || !this.config.preparedStatements) return this.manager().query(text, params);
    const scope = this.als.getStore();
    const runner = scope && !scope.optimistic ? scope.manager.queryRunner : undefined;
    const client: PgQueryable = runner
      ? await runner.connect()
      : (this.dataSource.driver as unknown as { master: PgQueryable }).master;
    try {
      const res = await client.query({ name: statementName(text), text, values: params });
      return res.rows as T[];
    } catch (e) {
      throw new QueryFailedError(text, params, e as Error);
    }
  }

  collect(events: DomainEvent[]): void {
    const scope = this.als.getStore();
    if (!scope) throw new Error('Aggregates are saved inside a unit of work only');
    if (scope.optimistic && events.length > 0)
      throw new Error('An optimistic unit of work appends events only with its one atomic write');
    scope.events.push(...events);
  }

  /**
   * A repository wrote its rows and appended its events in one statement. In an optimistic unit that
   * statement was the whole commit, so there may be only one.
   */
  appended(stored: StoredEvent[]): void {
    const scope = this.als.getStore();
    if (!scope) throw new Error('Aggregates are saved inside a unit of work only');
    if (scope.optimistic && scope.writes > 0) throw new Error('An optimistic unit of work makes one write');
    scope.writes += 1;
    scope.stored.push(...stored);
  }

  async run<T>(work: () => Promise<T>, opts: UnitOfWorkOptions = {}): Promise<T> {
    if (this.als.getStore()) return work(); // nested: join the outer unit
    if (opts.exclusive !== undefined) return this.exclusive.run(opts.exclusive, () => this.attempts(work, opts));
    return this.attempts(work, opts);
  }

  private async attempts<T>(work: () => Promise<T>, opts: UnitOfWorkOptions): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        // Optimistic once: a command that lost a race retries under row locks, so it waits its turn
        // instead of racing again (many writers of one conversation always make progress).
        const scope: Scope = {
          manager: this.dataSource.manager,
          events: [],
          stored: [],
          optimistic: !!opts.optimistic && attempt === 1,
          writes: 0,
        };
        let result: T;
        if (scope.optimistic) {
          result = await this.als.run(scope, work);
        } else {
          result = await this.dataSource.transaction(async (manager) => {
            scope.manager = manager;
            const value = await this.als.run(scope, work);
            scope.stored.push(...(await this.eventStore.append(manager, scope.events)));
            return value;
          });
        }
        if (scope.stored.length > 0) this.eventBus.publish(new EventsCommitted(scope.stored));
        return result;
      } catch (e) {
        // A lost race (stale version, duplicate key, deadlock) is retried from a fresh read:
        // the second try sees the winner's state and answers as the domain rules say.
        if (attempt >= MAX_ATTEMPTS || !isRetryable(e)) throw e;
        this.log.debug(`retrying unit of work after ${(e as Error).message}`);
      }
    }
  }
}

/** What `prepared` needs of a pg Client or Pool. */
interface PgQueryable {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

const names = new Map<string, string>();
/** One stable name per statement text (the texts are a handful of constants). */
function statementName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `tollgate_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    if (names.size < 256) names.set(text, name);
  }
  return name;
}

function isRetryable(e: unknown): boolean {
  // Work that found it needs a transaction (TransactionRequired) runs again in one: only the first try is optimistic.
  if (e instanceof StaleAggregateError || e instanceof TransactionRequired) return true;
  const code =
    (e as { code?: string; driverError?: { code?: string } })?.driverError?.code ?? (e as { code?: string })?.code;
  return !!code && RETRYABLE_PG_CODES.has(code);
}
