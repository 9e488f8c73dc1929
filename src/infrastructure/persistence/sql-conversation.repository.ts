import { Injectable } from '@nestjs/common';
import { Conversation } from '../../domain/conversation/conversation.aggregate';
import { HaltTarget } from '../../domain/halt/halt.aggregate';
import { ConversationRepository, ConversationWithCalls, LoadOptions } from '../../application/ports';
import { EventStore } from './event-store';
import { Beside, SqlConversationReader } from './sql-conversation.reader';
import { SqlConversationWriter } from './sql-conversation.writer';
import { TypeOrmUnitOfWork } from './unit-of-work';

/**
 * The conversation aggregate's store, in hand-written SQL: this repository is on every command's path, where
 * each statement is a round trip and TypeORM's query building cost more CPU than the database did
 * (docs/BENCHMARKS.md). Reads are in sql-conversation.reader.ts, saves in sql-conversation.writer.ts, and both
 * take their column lists from conversation-columns.ts. A save appends its events with the SQL function
 * `tollgate_append_events`, defined in migrations/1764300000000-hot-path.ts; its live definition is in
 * migrations/1764900000003-halt-fence.ts.
 */
@Injectable()
export class SqlConversationRepository implements ConversationRepository {
  private readonly reader: SqlConversationReader;
  private readonly writer: SqlConversationWriter;

  constructor(uow: TypeOrmUnitOfWork, eventStore: EventStore) {
    this.reader = new SqlConversationReader(uow);
    this.writer = new SqlConversationWriter(uow, eventStore);
  }

  /** Statements that wrote several saves at once, and how many saves they wrote (tests and benchmarks read it). */
  get grouped(): { statements: number; saves: number } {
    return this.writer.grouped;
  }

  findById(tenantId: string, id: string, opts: LoadOptions = {}): Promise<Conversation | null> {
    return this.reader.findById(tenantId, id, opts);
  }

  findByToolCallId(tenantId: string, toolCallId: string, opts: LoadOptions = {}): Promise<Conversation | null> {
    return this.reader.findByToolCallId(tenantId, toolCallId, opts);
  }

  findWithCalls(
    tenantId: string,
    id: string,
    only?: { externalIds: readonly string[] },
  ): Promise<ConversationWithCalls | null> {
    return this.reader.findWithCalls(tenantId, id, only);
  }

  /** `findById` without a lock, with what `beside` selects in the same statement (see the reader). */
  findByIdWith<X>(
    tenantId: string,
    id: string,
    opts: LoadOptions,
    beside: Beside,
  ): Promise<{ conversation: Conversation; extra: X } | null> {
    return this.reader.findByIdWith<X>(tenantId, id, opts, beside);
  }

  /** The root row (version-checked), new and changed calls, and the events: see the writer for which statement. */
  save(c: Conversation): Promise<void> {
    return this.writer.save(c);
  }

  findWithOpenCalls(tenantId: string, target: HaltTarget): Promise<string[]> {
    return this.reader.findWithOpenCalls(tenantId, target);
  }

  findWithDueExpiries(now: Date, limit: number): Promise<Array<{ tenantId: string; conversationId: string }>> {
    return this.reader.findWithDueExpiries(now, limit);
  }
}
