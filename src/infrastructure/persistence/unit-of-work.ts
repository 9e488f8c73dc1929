import { Inject, Injectable, Logger } from '@nestjs/common';
import { EventBus } from '@nestjs/cqrs';
import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource, EntityManager } from 'typeorm';
import { DomainEvent } from '../../domain/shared/domain-event';
import { UnitOfWork } from '../../application/ports';
import { EventsCommitted, StoredEvent } from '../../application/ports/stored-event';
import { EventStore } from './event-store';

interface Scope {
  manager: EntityManager;
  events: DomainEvent[];
}

/** Thrown when an aggregate changed since it was loaded (0 rows matched `WHERE version = :v`). */
export class StaleAggregateError extends Error {}

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

  get inTransaction(): boolean {
    return !!this.als.getStore();
  }

  collect(events: DomainEvent[]): void {
    const scope = this.als.getStore();
    if (!scope) throw new Error('Aggregates are saved inside a unit of work only');
    scope.events.push(...events);
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.als.getStore()) return work(); // nested: join the outer transaction
    for (let attempt = 1; ; attempt++) {
      try {
        let stored: StoredEvent[] = [];
        const result = await this.dataSource.transaction(async (manager) => {
          const scope: Scope = { manager, events: [] };
          const value = await this.als.run(scope, work);
          stored = await this.eventStore.append(manager, scope.events);
          return value;
        });
        if (stored.length > 0) this.eventBus.publish(new EventsCommitted(stored));
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
