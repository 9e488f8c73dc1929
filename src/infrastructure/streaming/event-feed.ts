import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { EventsHandler, IEventHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { AUDIT_LOG, AuditEvent, AuditLog } from '../../application/ports/audit-log.port';
import { EventsCommitted } from '../../application/ports/stored-event';
import { Principal, isAgent } from '../../domain/shared/actor';
import { TOLLGATE_CONFIG, TollgateConfig } from '../config/config';

const BATCH = 500;

export interface FeedSubscription {
  close(): void;
}

interface Subscriber {
  principal: Principal;
  lastSeq: number;
  push(events: AuditEvent[]): void;
  end(): void;
}

interface TenantTail {
  subscribers: Set<Subscriber>;
  running?: Promise<void>;
  again: boolean;
  timer: NodeJS.Timeout;
}

/**
 * Live events for SSE: one tail per tenant with listeners, shared by all of them. It reads the events
 * table after the lowest cursor — every `streamPollMs`, and at once after a local commit — so events
 * committed on any instance reach every stream, in seq order, resumable by seq. Agents receive only the
 * events of their own conversations; people the whole tenant's (CONTRACT §11).
 */
@Injectable()
export class EventFeed implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly tails = new Map<string, TenantTail>();
  private readonly agentOf = new Map<string, string>();
  private readonly log = new Logger('EventFeed');

  constructor(@Inject(AUDIT_LOG) private readonly audit: AuditLog, private readonly dataSource: DataSource, @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig) {}

  /** The seq of the tenant's newest event: where a stream without Last-Event-ID starts. */
  async head(tenantId: string): Promise<number> {
    return (await this.audit.head(tenantId)).seq;
  }

  subscribe(principal: Principal, afterSeq: number, push: (events: AuditEvent[]) => void, end: () => void): FeedSubscription {
    const sub: Subscriber = { principal, lastSeq: afterSeq, push, end };
    let tail = this.tails.get(principal.tenant);
    if (!tail) {
      const tenantId = principal.tenant;
      tail = { subscribers: new Set(), again: false, timer: setInterval(() => this.kick(tenantId), this.config.streamPollMs).unref() };
      this.tails.set(tenantId, tail);
    }
    tail.subscribers.add(sub);
    this.kick(principal.tenant);
    return {
      close: () => {
        const t = this.tails.get(principal.tenant);
        if (!t) return;
        t.subscribers.delete(sub);
        if (t.subscribers.size === 0) {
          clearInterval(t.timer);
          this.tails.delete(principal.tenant);
        }
      },
    };
  }

  kick(tenantId: string): void {
    const tail = this.tails.get(tenantId);
    if (!tail) return;
    if (tail.running) {
      tail.again = true;
      return;
    }
    tail.running = this.read(tenantId, tail)
      .catch((e) => this.log.warn(`event feed read failed for ${tenantId}: ${(e as Error).message}`))
      .finally(() => {
        tail.running = undefined;
        if (tail.again) {
          tail.again = false;
          this.kick(tenantId);
        }
      });
  }

  private async read(tenantId: string, tail: TenantTail): Promise<void> {
    for (;;) {
      if (tail.subscribers.size === 0) return;
      const from = Math.min(...[...tail.subscribers].map((s) => s.lastSeq));
      const events = await this.audit.list({ tenantId, afterSeq: from }, BATCH);
      if (events.length === 0) return;
      await this.learnAgents(tenantId, events);
      for (const sub of tail.subscribers) {
        const mine = events.filter((e) => e.seq > sub.lastSeq && this.visible(sub.principal, e));
        if (mine.length > 0) sub.push(mine);
        sub.lastSeq = Math.max(sub.lastSeq, events[events.length - 1].seq);
      }
      if (events.length < BATCH) return;
    }
  }

  private visible(p: Principal, e: AuditEvent): boolean {
    if (!isAgent(p)) return true;
    return !!e.conversationId && this.agentOf.get(`${e.tenant}\u0000${e.conversationId}`) === p.id;
  }

  /** Which agent owns each conversation in the batch (cached: a conversation never changes agent). */
  private async learnAgents(tenantId: string, events: AuditEvent[]): Promise<void> {
    const unknown = [...new Set(events.flatMap((e) => (e.conversationId && !this.agentOf.has(`${tenantId}\u0000${e.conversationId}`) ? [e.conversationId] : [])))];
    if (unknown.length === 0) return;
    const rows: Array<{ id: string; agent_id: string }> = await this.dataSource.query(`SELECT id, agent_id FROM conversations WHERE tenant_id = $1 AND id = ANY($2::text[])`, [tenantId, unknown]);
    if (this.agentOf.size > 100_000) this.agentOf.clear();
    for (const r of rows) this.agentOf.set(`${tenantId}\u0000${r.id}`, r.agent_id);
  }

  /** At shutdown every stream is ended so the server can close. */
  beforeApplicationShutdown(): void {
    for (const tail of this.tails.values()) for (const sub of tail.subscribers) sub.end();
  }

  onApplicationShutdown(): void {
    for (const tail of this.tails.values()) clearInterval(tail.timer);
    this.tails.clear();
  }
}

/** A local commit reaches local streams at once; other instances' commits arrive with the next poll. */
@EventsHandler(EventsCommitted)
export class KickEventFeedOnCommit implements IEventHandler<EventsCommitted> {
  constructor(private readonly feed: EventFeed) {}
  handle({ events }: EventsCommitted): void {
    for (const tenant of new Set(events.map((e) => e.tenantId))) this.feed.kick(tenant);
  }
}
