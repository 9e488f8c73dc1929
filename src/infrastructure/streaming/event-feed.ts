import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationShutdown, Optional } from '@nestjs/common';
import { EventsHandler, IEventHandler } from '@nestjs/cqrs';
import type { Writable } from 'node:stream';
import { DataSource } from 'typeorm';
import { AUDIT_LOG, AuditEvent, AuditLog } from '../../application/ports/audit-log.port';
import { DELEGATIONS, DelegationFrom, DelegationRepository } from '../../application/ports/delegation.port';
import { EventsCommitted } from '../../application/ports/stored-event';
import { ConversationParties, mayReadConversation } from '../../domain/conversation/conversation.aggregate';
import { mayDecideAmong } from '../../domain/conversation/rules/who-may-decide';
import { delegatedAuthorities, MAX_DELEGATORS } from '../../domain/person/delegation';
import { namesPerson } from '../../domain/policy/assignee';
import { Principal, hasAnyRole, isAgent } from '../../domain/shared/actor';
import { TOLLGATE_CONFIG, TollgateConfig } from '../config/config';
import { detachedScope } from '../observability/trace-context';
import { eventJsonFromRow } from '../persistence/event-store';
import { COLUMNS, fromRaw, RawEvent } from '../persistence/sql-audit-log';

/** Most events one page holds; fewer when they are big (see PAGE_BYTES). */
const MAX_PAGE_ROWS = 500;
const FIRST_PAGE_ROWS = 100;
/** Bytes of event data one page holds beyond its first event, so a backlog of big events is read a little at a time. */
const PAGE_BYTES = 256 * 1024;
/** A stream whose client has taken nothing of its full buffer for this long is dropped (it resumes with Last-Event-ID). */
const STALL_MS = 20_000;
/**
 * How long the delegations to a tenant's streaming people are kept before they are read again: a new delegation
 * reaches its delegate's stream within this; one that ends stops at once (each is checked against the clock).
 */
const DELEGATIONS_MS = 5_000;

export interface FeedSubscription {
  close(): void;
}

/**
 * Events outside any conversation, by the roles (besides admin and auditor, who read the whole trail) whose REST
 * reads show the same thing: policy (`GET /v1/policy`), tools (`GET /v1/tools`), halts (`GET /v1/status`), grants
 * (`GET /v1/grants`).
 * Webhooks and purges are for admins and auditors only.
 */
const TENANT_EVENT_READERS: Record<string, readonly string[]> = {
  PolicyUpdated: ['approver'],
  ToolRegistered: ['approver'],
  Halted: ['approver'],
  Resumed: ['approver'],
  // A revoked agent or tenant grant (GET /v1/grants); a conversation grant's revocation is that conversation's event.
  GrantRevoked: ['approver'],
};

/**
 * What a principal may read of one event on the stream: what its roles may read through the REST API.
 * `parties` is the event's conversation, when it has one; `approvers`, its call's approvers (a person named there
 * reads that call's events, as GET /v1/tool-calls/:id shows them). `delegators`: the people whose delegation to the
 * principal holds now, as their records show them: a delegate reads the events of the calls one of them may decide
 * (and of a `notify` call that names one), as GET /v1/tool-calls/:id shows those calls to them.
 */
export function mayRead(
  p: Principal,
  e: AuditEvent,
  parties: ConversationParties | undefined,
  approvers: readonly string[] = [],
  delegators: readonly Principal[] = [],
): boolean {
  // A conversation's events as GET /v1/conversations/:id shows them (agents: their own only).
  if (parties) {
    if (mayReadConversation(p, parties)) return true;
    if (!e.toolCallId || isAgent(p)) return false;
    if (namesPerson(approvers, p)) return true;
    // A `notify` call waits for no one, so its FYI names its people in the event alone.
    const told = e.type === 'ToolCallNotified' ? approversIn(e) : NO_ONE;
    if (namesPerson(told, p)) return true;
    return delegators.some(
      (d) => (approvers.length > 0 && mayDecideAmong(d, approvers, parties.userId)) || namesPerson(told, d),
    );
  }
  // A token with `agent` acts as an agent, whatever else it holds: nothing outside its conversations.
  if (isAgent(p)) return false;
  // Auditors and admins read the tenant's whole trail (GET /v1/audit/events).
  if (hasAnyRole(p, ['auditor', 'admin'])) return true;
  return hasAnyRole(p, TENANT_EVENT_READERS[e.type] ?? []);
}

/** One SSE frame (CONTRACT §11): `id: <seq>`, `event: <type>`, `data: <event JSON>`. */
export function sseFrame(e: AuditEvent): string {
  return `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
}

interface PageSize {
  /** Rows to ask for next: adapts to the size of the events, so a page stays near PAGE_BYTES. */
  rows: number;
}

interface Page {
  events: AuditEvent[];
  /** False once the page reached the newest event. */
  more: boolean;
}

interface Subscriber extends PageSize {
  readonly principal: Principal;
  readonly out: Writable;
  /** The last event this stream is done with: written to it, or not its to read. */
  lastSeq: number;
  /** Fed by the tenant's shared tail; false while it reads its own pages of the backlog. */
  live: boolean;
  /** Reading a page of its own, or waiting for its client to take what it holds. */
  busy: boolean;
  closed: boolean;
  stall?: NodeJS.Timeout;
  onDrain?: () => void;
}

interface TenantTail extends PageSize {
  subscribers: Set<Subscriber>;
  /** The last event the tail has handed to its live subscribers. */
  cursor?: number;
  running?: Promise<void>;
  again: boolean;
  timer: NodeJS.Timeout;
}

/**
 * Live events for SSE, written with backpressure. A stream first reads its backlog from the events table itself,
 * a page at a time, and reads the next page only when its client has taken the last ones: what it holds for its
 * client stays under `streamMaxBufferBytes`, however long the backlog. Once caught up it joins the tenant's shared
 * tail, which reads what is new — every `streamPollMs`, and at once after a local commit — so events committed on
 * any instance reach every stream in seq order, resumable by seq. A stream whose client falls behind leaves the
 * tail and pages on its own again; one whose client takes nothing of a full buffer for `STALL_MS` is dropped and
 * resumes with Last-Event-ID. Each principal sees only what its roles may read over REST (`mayRead`).
 */
@Injectable()
export class EventFeed implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly tails = new Map<string, TenantTail>();
  private readonly parties = new Map<string, ConversationParties>();
  /**
   * Each call's approvers (none for a call the policy settled), so named people and delegates get their calls'
   * events. Lists are shared: a tenant's calls hold a handful of different ones.
   */
  private readonly approvers = new Map<string, readonly string[]>();
  private readonly lists = new Map<string, readonly string[]>();
  /** The delegations to each tenant's streaming people that held when last read, and when that was. */
  private readonly delegations = new Map<string, { readAt: number; rows: DelegationFrom[] }>();
  private readonly frames = new WeakMap<AuditEvent, string>();
  private readonly log = new Logger('EventFeed');
  /** A tenant's tail serves every stream of it; the commit that kicked a read does not own it. */
  private readonly background = detachedScope('tollgate.event-feed');

  constructor(
    @Inject(AUDIT_LOG) private readonly audit: AuditLog,
    private readonly dataSource: DataSource,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
    // Without it no delegate reads through a delegation (fail closed).
    @Optional() @Inject(DELEGATIONS) private readonly delegationStore?: DelegationRepository,
  ) {}

  /** The seq of the tenant's newest event: where a stream without Last-Event-ID starts. */
  async head(tenantId: string): Promise<number> {
    return (await this.audit.head(tenantId)).seq;
  }

  /** Writes the events after `afterSeq` that `principal` may read to `out`, as SSE frames, until closed. */
  subscribe(principal: Principal, afterSeq: number, out: Writable): FeedSubscription {
    const sub: Subscriber = {
      principal,
      out,
      lastSeq: afterSeq,
      live: false,
      busy: false,
      closed: false,
      rows: FIRST_PAGE_ROWS,
    };
    const tenantId = principal.tenant;
    let tail = this.tails.get(tenantId);
    if (!tail) {
      tail = {
        subscribers: new Set(),
        again: false,
        rows: FIRST_PAGE_ROWS,
        timer: setInterval(() => this.kick(tenantId), this.config.streamPollMs).unref(),
      };
      this.tails.set(tenantId, tail);
    }
    tail.subscribers.add(sub);
    // A person's stream reads the delegations to them before its first page (not up to DELEGATIONS_MS later).
    if (!isAgent(principal)) this.delegations.delete(tenantId);
    this.catchUp(sub);
    return { close: () => this.unsubscribe(sub) };
  }

  /** Streams open on this instance. */
  get openStreams(): number {
    let n = 0;
    for (const tail of this.tails.values()) n += tail.subscribers.size;
    return n;
  }

  kick(tenantId: string): void {
    const tail = this.tails.get(tenantId);
    if (!tail) return;
    if (tail.running) {
      tail.again = true;
      return;
    }
    tail.running = this.background(() => this.readTail(tenantId, tail))
      .catch((e) => this.log.warn(`event feed read failed for ${tenantId}: ${(e as Error).message}`))
      .finally(() => {
        tail.running = undefined;
        if (tail.again) {
          tail.again = false;
          this.kick(tenantId);
        }
      });
  }

  private async readTail(tenantId: string, tail: TenantTail): Promise<void> {
    for (;;) {
      // The cursor does not move back while this read is out (see join), so no live stream misses an event.
      if (tail.cursor === undefined || ![...tail.subscribers].some((s) => s.live)) return;
      const page = await this.page(tenantId, tail.cursor, tail);
      if (page.events.length === 0) return;
      for (const sub of tail.subscribers) {
        // A stream whose client cannot take more leaves the tail: it reads its own pages once drained.
        if (sub.live && !this.deliver(sub, page.events)) this.awaitDrain(sub);
      }
      tail.cursor = page.events[page.events.length - 1].seq;
      if (!page.more) return;
    }
  }

  /** Reads the stream's own pages until it is caught up (then joins the tail) or its client's buffer is full. */
  private catchUp(sub: Subscriber): void {
    if (sub.busy || sub.live || sub.closed) return;
    sub.busy = true;
    this.readOwn(sub).catch((e) => {
      // The client reconnects with Last-Event-ID, on this instance or another.
      this.log.warn(`event stream of ${sub.principal.tenant} failed: ${(e as Error).message}`);
      this.drop(sub);
    });
  }

  private async readOwn(sub: Subscriber): Promise<void> {
    const tenantId = sub.principal.tenant;
    for (;;) {
      if (sub.closed || sub.out.destroyed) return; // its 'close' unsubscribes it
      const page = await this.page(tenantId, sub.lastSeq, sub);
      if (sub.closed || sub.out.destroyed) return;
      if (!this.deliver(sub, page.events)) return this.awaitDrain(sub);
      if (!page.more && this.join(sub, this.tails.get(tenantId)!)) return;
    }
  }

  /**
   * A stream at the end of the table hands over to the shared tail, unless the tail has already read past it (then
   * it reads one more page of its own). With no live stream the tail simply starts where this one is.
   */
  private join(sub: Subscriber, tail: TenantTail): boolean {
    const othersLive = [...tail.subscribers].some((s) => s.live);
    if (!othersLive && (!tail.running || tail.cursor === undefined)) tail.cursor = sub.lastSeq;
    else if (tail.cursor === undefined || sub.lastSeq < tail.cursor) return false;
    sub.live = true;
    sub.busy = false;
    return true;
  }

  /** Writes what the stream may read while its client's buffer has room; false at the first event that finds none. */
  private deliver(sub: Subscriber, events: AuditEvent[]): boolean {
    const delegators = this.delegatorsOf(sub.principal);
    for (const e of events) {
      if (sub.closed || sub.out.destroyed) return true;
      if (e.seq <= sub.lastSeq) continue;
      const parties = e.conversationId ? this.parties.get(partyKey(e.tenant, e.conversationId)) : undefined;
      const approvers = e.toolCallId ? this.approvers.get(partyKey(e.tenant, e.toolCallId)) : undefined;
      if (mayRead(sub.principal, e, parties, approvers, delegators)) {
        if (sub.out.writableLength >= this.config.streamMaxBufferBytes) return false;
        sub.out.write(this.frame(e));
      }
      sub.lastSeq = e.seq;
    }
    return true;
  }

  /** Nothing more is written until the client has taken what it holds; a client that takes nothing is dropped. */
  private awaitDrain(sub: Subscriber): void {
    if (sub.closed) return;
    sub.live = false;
    sub.busy = true;
    const resume = () => {
      clearTimeout(sub.stall);
      sub.stall = undefined;
      sub.onDrain = undefined;
      sub.busy = false;
      this.catchUp(sub);
    };
    sub.onDrain = resume;
    sub.out.once('drain', resume);
    const watch = (held: number) => {
      sub.stall = setTimeout(
        () => (sub.out.writableLength < held ? watch(sub.out.writableLength) : this.drop(sub)),
        STALL_MS,
      );
      sub.stall.unref();
    };
    watch(sub.out.writableLength);
  }

  /** Ends the client's connection without waiting for it to read what is queued: the queue is what must go. */
  private drop(sub: Subscriber): void {
    this.unsubscribe(sub);
    sub.out.destroy();
  }

  private unsubscribe(sub: Subscriber): void {
    if (sub.closed) return;
    sub.closed = true;
    sub.live = false;
    clearTimeout(sub.stall);
    if (sub.onDrain) sub.out.off('drain', sub.onDrain);
    const tenantId = sub.principal.tenant;
    const tail = this.tails.get(tenantId);
    if (!tail) return;
    tail.subscribers.delete(sub);
    if (tail.subscribers.size === 0) {
      clearInterval(tail.timer);
      this.tails.delete(tenantId);
      this.delegations.delete(tenantId);
    }
  }

  /**
   * The events after `afterSeq`, oldest first: at most `size.rows`, and no more than PAGE_BYTES of data past the
   * first, counted in the database, so a page of big events is small where it is read. The conversations' parties
   * are learnt on the way.
   */
  private async page(tenantId: string, afterSeq: number, size: PageSize): Promise<Page> {
    const asked = size.rows;
    const budget = Math.min(PAGE_BYTES, this.config.streamMaxBufferBytes);
    const rows: Array<RawEvent & { size: string; upto: string; fetched: string }> = await this.dataSource.query(
      `SELECT * FROM (
         SELECT p.*, sum(p.size) OVER (ORDER BY p.seq) AS upto, count(*) OVER () AS fetched FROM (
           SELECT ${COLUMNS}, octet_length(e.data::text) AS size FROM events e WHERE e.tenant_id = $1 AND e.seq > $2 ORDER BY e.seq LIMIT $3
         ) p
       ) q WHERE q.upto - q.size < $4 ORDER BY q.seq`,
      [tenantId, afterSeq, asked, budget],
    );
    if (rows.length === 0) return { events: [], more: false };
    const bytes = Number(rows[rows.length - 1].upto);
    const fetched = Number(rows[0].fetched);
    size.rows = Math.max(1, Math.min(MAX_PAGE_ROWS, Math.floor((budget * rows.length) / Math.max(1, bytes))));
    const events = rows.map((r) => eventJsonFromRow(fromRaw(r)));
    await this.learnParties(tenantId, events);
    await this.learnApprovers(tenantId, events);
    await this.learnDelegations(tenantId);
    return { events, more: rows.length < fetched || fetched >= asked };
  }

  private frame(e: AuditEvent): string {
    let f = this.frames.get(e);
    if (f === undefined) this.frames.set(e, (f = sseFrame(e)));
    return f;
  }

  /** Who started each conversation in the batch and for whom (cached: neither ever changes). */
  private async learnParties(tenantId: string, events: AuditEvent[]): Promise<void> {
    const unknown = [
      ...new Set(
        events.flatMap((e) =>
          e.conversationId && !this.parties.has(partyKey(tenantId, e.conversationId)) ? [e.conversationId] : [],
        ),
      ),
    ];
    if (unknown.length === 0) return;
    const rows: Array<{ id: string; agent_id: string; user_id: string | null }> = await this.dataSource.query(
      `SELECT id, agent_id, user_id FROM conversations WHERE tenant_id = $1 AND id = ANY($2::text[])`,
      [tenantId, unknown],
    );
    if (this.parties.size > 100_000) this.parties.clear();
    for (const r of rows) this.parties.set(partyKey(tenantId, r.id), { agentId: r.agent_id, userId: r.user_id });
  }

  /**
   * Who each call of the batch may be decided by: its approvers. A call's approvers only grow (an escalation step
   * adds some) and the events that set them carry the whole list, so what is known only grows too: an old page (a
   * stream's backlog) never takes back an approver a later event added. A call seen proposed has none until its
   * ApprovalRequested (in the same commit); one first met later on is read from tool_calls once.
   */
  private async learnApprovers(tenantId: string, events: AuditEvent[]): Promise<void> {
    if (this.approvers.size > 100_000) this.approvers.clear();
    const unknown = new Set<string>();
    const learn = (id: string, approvers: readonly string[]) => {
      const key = partyKey(tenantId, id);
      const known = this.approvers.get(key) ?? NO_ONE;
      const added = approvers.filter((a) => !known.includes(a));
      if (added.length > 0) this.approvers.set(key, this.shared([...known, ...added]));
      else if (!this.approvers.has(key)) this.approvers.set(key, NO_ONE);
      unknown.delete(id);
    };
    for (const e of events) {
      if (!e.toolCallId) continue;
      if (e.type === 'ApprovalRequested' || e.type === 'ToolCallEscalated') learn(e.toolCallId, approversIn(e));
      else if (this.approvers.has(partyKey(tenantId, e.toolCallId))) continue;
      else if (e.type === 'ToolCallProposed') learn(e.toolCallId, NO_ONE);
      else unknown.add(e.toolCallId);
    }
    if (unknown.size === 0) return;
    // Only held calls come back; the others have no approvers.
    const rows: Array<{ id: string; approvers: string[] }> = await this.dataSource.query(
      `SELECT id, approvers FROM tool_calls WHERE tenant_id = $1 AND id = ANY($2::text[]) AND approvers IS NOT NULL`,
      [tenantId, [...unknown]],
    );
    const found = new Map(rows.map((r) => [r.id, r.approvers.filter((a) => typeof a === 'string')]));
    for (const id of [...unknown]) learn(id, found.get(id) ?? NO_ONE);
  }

  /** One array per distinct list of approvers, so a million calls of one rule hold one list. */
  private shared(list: string[]): readonly string[] {
    const key = list.join('\u0000');
    let kept = this.lists.get(key);
    if (!kept) {
      if (this.lists.size > 10_000) this.lists.clear();
      this.lists.set(key, (kept = Object.freeze(list)));
    }
    return kept;
  }

  /**
   * The delegations to the tenant's streaming people that hold now, read again once DELEGATIONS_MS old: before a
   * page is delivered, so a delegate's stream carries what a delegation lets them read (checked at delivery).
   */
  private async learnDelegations(tenantId: string): Promise<void> {
    if (!this.delegationStore) return;
    const known = this.delegations.get(tenantId);
    if (known && Date.now() - known.readAt < DELEGATIONS_MS) return;
    const people = [...(this.tails.get(tenantId)?.subscribers ?? [])]
      .map((s) => s.principal)
      .filter((p) => !isAgent(p))
      .map((p) => p.id);
    const ids = [...new Set(people)];
    const rows =
      ids.length === 0
        ? []
        : await this.delegationStore.toPersons(tenantId, ids, new Date(), ids.length * MAX_DELEGATORS);
    this.delegations.set(tenantId, { readAt: Date.now(), rows });
  }

  /** The people whose delegation to `p` holds now, as their records show them (none for an agent). */
  private delegatorsOf(p: Principal): Principal[] {
    const rows = this.delegations.get(p.tenant)?.rows;
    if (!rows || rows.length === 0 || isAgent(p)) return [];
    return delegatedAuthorities(rows, p.id, new Date(), this.config.personMaxAgeSeconds);
  }

  /** At shutdown every stream is ended so the server can close; one whose client is not reading is cut off. */
  beforeApplicationShutdown(): void {
    for (const tail of [...this.tails.values()]) {
      for (const sub of [...tail.subscribers]) {
        if (sub.out.writableLength > 0) this.drop(sub);
        else {
          this.unsubscribe(sub);
          sub.out.end();
        }
      }
    }
  }

  onApplicationShutdown(): void {
    for (const tail of this.tails.values()) clearInterval(tail.timer);
    this.tails.clear();
  }
}

function partyKey(tenantId: string, id: string): string {
  return `${tenantId}\u0000${id}`;
}

const NO_ONE: readonly string[] = Object.freeze([]);
/** The `approvers` an event's data lists (ApprovalRequested, ToolCallEscalated, ToolCallNotified), strings only. */
const approversIn = (e: AuditEvent): string[] =>
  Array.isArray(e.data.approvers) ? e.data.approvers.filter((a): a is string => typeof a === 'string') : [];

/** A local commit reaches local streams at once; other instances' commits arrive with the next poll. */
@EventsHandler(EventsCommitted)
export class KickEventFeedOnCommit implements IEventHandler<EventsCommitted> {
  constructor(private readonly feed: EventFeed) {}
  handle({ events }: EventsCommitted): void {
    for (const tenant of new Set(events.map((e) => e.tenantId))) this.feed.kick(tenant);
  }
}
