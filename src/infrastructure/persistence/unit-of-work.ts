import { Inject, Injectable, Logger } from '@nestjs/common';
import { EventBus } from '@nestjs/cqrs';
import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource, EntityManager } from 'typeorm';
import { DomainEvent } from '../../domain/shared/domain-event';
import { UnitOfWork, UnitOfWorkOptions } from '../../application/ports';
import { EventsCommitted, StoredEvent } from '../../application/ports/stored-event';
import { EventStore } from './event-store';

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

  constructor(
    private readonly dataSource: DataSource,
    private readonly eventStore: EventStore,
    @Inject(EventBus) private readonly eventBus: EventBus,
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

  /** True inside any unit of work: loaded aggregates belong to this command alone. */
  get inUnitOfWork(): boolean {
    return !!this.als.getStore();
  }

  collect(events: DomainEvent[]): void {
    const scope = this.als.getStore();
    if (!scope) throw new Error('Aggregates are saved inside a unit of work only');
    if (scope.optimistic && events.length > 0) throw new Error('An optimistic unit of work appends events only with its one atomic write');
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
    for (let attempt = 1; ; attempt++) {
      try {
        // Optimistic once: a command that lost a race retries under row locks, so it waits its turn
        // instead of racing again (many writers of one conversation always make progress).
        const scope: Scope = { manager: this.dataSource.manager, events: [], stored: [], optimistic: !!opts.optimistic && attempt === 1, writes: 0 };
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

function isRetryable(e: unknown): boolean {
  if (e instanceof StaleAggregateError) return true;
  const code = (e as { code?: string; driverError?: { code?: string } })?.driverError?.code ?? (e as { code?: string })?.code;
  return !!code && RETRYABLE_PG_CODES.has(code);
}
