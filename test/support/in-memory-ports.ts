/**
 * In-memory fakes of the application ports (src/application/ports), for handler tests without a
 * database or a Nest testing module. They mirror what the TypeORM adapters do (see
 * src/infrastructure/persistence): repositories pull changed calls and events from the aggregate,
 * check versions, and hand their events to the unit of work, which keeps them only on commit.
 *
 * Stores hold plain state (snapshots), never aggregates: every load rehydrates a fresh aggregate,
 * so two handlers can never share an instance.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type {
  Clock,
  ConversationRepository,
  ConversationWithCalls,
  GrantListFilter,
  GrantRepository,
  HaltRepository,
  IdGenerator,
  LoadOptions,
  PolicyRepository,
  ReceiptClaims,
  ReceiptIdentity,
  ReceiptSigner,
  ToolCallWaiters,
  ToolRepository,
  UnitOfWork,
  Watch,
} from '../../src/application/ports';
import type { StoredEvent } from '../../src/application/ports/stored-event';
import { Conversation, ConversationState, HaltInForce } from '../../src/domain/conversation/conversation.aggregate';
import type { ToolCallState } from '../../src/domain/conversation/tool-call.entity';
import { Grant, GrantState } from '../../src/domain/grant/grant.aggregate';
import { Halt, HaltState, HaltTarget } from '../../src/domain/halt/halt.aggregate';
import { haltThatApplies } from '../../src/domain/halt/rules/halt-that-applies';
import { PolicyDocument, PolicyDocumentJson } from '../../src/domain/policy/policy-document';
import { TenantPolicy } from '../../src/domain/policy/tenant-policy.aggregate';
import type { DomainEvent } from '../../src/domain/shared/domain-event';
import { Tool, ToolState } from '../../src/domain/tool/tool.aggregate';

// ---------------------------------------------------------------- errors (what the database would say)

/** An aggregate changed since it was loaded: `UPDATE … WHERE version = :v` matched no row. Retried, like the real one. */
export class StaleAggregateError extends Error {}

/** A primary key already taken (PostgreSQL 23505). Retried, like the real one. */
export class DuplicateKeyError extends Error {}

/** Something saved outside `uow.run`: the real repositories refuse it too. */
export class NotInUnitOfWorkError extends Error {}

const MAX_ATTEMPTS = 4;

function clone<T>(v: T): T {
  return structuredClone(v);
}

// ---------------------------------------------------------------- unit of work

/** A store whose whole state the unit of work can set aside and put back (a rollback). */
export interface Transactional {
  snapshot(): unknown;
  restore(snapshot: unknown): void;
}

interface Scope {
  events: DomainEvent[];
}

/**
 * Runs work one unit at a time (like row locks serialising writers). Events that repositories
 * `collect` during the work are kept in `events` only when the work resolves and the commit
 * succeeds; on a throw, every enlisted store is restored and the events are dropped.
 * A nested `run` joins the outer one. Stale versions and duplicate keys are retried from a fresh
 * read, as the TypeORM unit of work does.
 */
export class InMemoryUnitOfWork implements UnitOfWork {
  /** Every committed event, in order, numbered and hash-chained per tenant like the audit trail. */
  readonly events: StoredEvent[] = [];
  commits = 0;
  rollbacks = 0;

  private readonly als = new AsyncLocalStorage<Scope>();
  private readonly stores: Transactional[] = [];
  private readonly listeners: Array<(events: StoredEvent[]) => void> = [];
  private readonly heads = new Map<string, { seq: number; hash: string }>();
  private tail: Promise<void> = Promise.resolve();
  private failures: Error[] = [];
  private eventIds = 0;

  /** Repositories enlist their stores so a failed unit of work can put them back. */
  enlist(store: Transactional): void {
    this.stores.push(store);
  }

  get inTransaction(): boolean {
    return !!this.als.getStore();
  }

  /** Called by repositories on save, as `TypeOrmUnitOfWork.collect`. */
  collect(events: DomainEvent[]): void {
    const scope = this.als.getStore();
    if (!scope) throw new NotInUnitOfWorkError('Aggregates are saved inside a unit of work only');
    scope.events.push(...events);
  }

  /** The next outermost unit of work runs its work, then fails to commit with `error`. */
  failNextCommit(error: Error = new Error('commit failed')): void {
    this.failures.push(error);
  }

  /** Called with the stored events after each commit that wrote some (like `EventsCommitted`). */
  afterCommit(listener: (events: StoredEvent[]) => void): void {
    this.listeners.push(listener);
  }

  /** Types of the committed events, optionally from position `from` (see `mark`). */
  types(from = 0): string[] {
    return this.events.slice(from).map((e) => e.type);
  }

  /** Where the trail ends now: pass it to `types`/`since` to see what a use case recorded. */
  mark(): number {
    return this.events.length;
  }

  since(from: number): StoredEvent[] {
    return this.events.slice(from);
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.als.getStore()) return work(); // nested: join the outer unit of work
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    try {
      for (let attempt = 1; ; attempt++) {
        const saved = this.stores.map((s) => s.snapshot());
        const scope: Scope = { events: [] };
        try {
          const value = await this.als.run(scope, work);
          const failure = this.failures.shift();
          if (failure) throw failure;
          this.commit(scope.events);
          return value;
        } catch (e) {
          this.stores.forEach((s, i) => s.restore(saved[i]));
          this.rollbacks += 1;
          if (attempt >= MAX_ATTEMPTS || !(e instanceof StaleAggregateError || e instanceof DuplicateKeyError)) throw e;
        }
      }
    } finally {
      release();
    }
  }

  private commit(events: DomainEvent[]): void {
    const stored = events.map((e) => this.append(e));
    this.events.push(...stored);
    this.commits += 1;
    if (stored.length > 0) for (const l of this.listeners) l(stored);
  }

  private append(e: DomainEvent): StoredEvent {
    const head = this.heads.get(e.tenantId) ?? { seq: 0, hash: '0'.repeat(64) };
    const seq = head.seq + 1;
    const id = `evt_${++this.eventIds}`;
    const json = JSON.parse(
      JSON.stringify({
        seq,
        id,
        type: e.type,
        at: e.at,
        tenant: e.tenantId,
        conversationId: e.conversationId,
        toolCallId: e.toolCallId,
        toolName: e.toolName,
        actor: e.actor,
        data: e.data,
        prevHash: head.hash,
      }),
    );
    const hash = createHash('sha256')
      .update(head.hash + canonicalize(json))
      .digest('hex');
    this.heads.set(e.tenantId, { seq, hash });
    return { ...e, seq, id, prevHash: head.hash, hash };
  }
}

/** Map-backed store that enlists in the unit of work; values must be structured-cloneable. */
class Table<V> implements Transactional {
  rows = new Map<string, V>();
  snapshot(): unknown {
    return clone(this.rows);
  }
  restore(snapshot: unknown): void {
    this.rows = snapshot as Map<string, V>;
  }
}

const key = (...parts: string[]) => parts.join('\u0000');

// ---------------------------------------------------------------- conversations

/**
 * Stores ConversationState snapshots. `save` does what SqlConversationRepository does: insert at
 * version 0, else update only if the stored version is the loaded one; insert the calls the aggregate
 * reports as added, update the ones it reports as changed (a call changed without being reported is
 * not written, as in the database); bump the version; hand the events to the unit of work.
 */
export class InMemoryConversationRepository implements ConversationRepository {
  private readonly table = new Table<ConversationState>();

  constructor(private readonly uow: InMemoryUnitOfWork) {
    uow.enlist(this.table);
  }

  async findById(tenantId: string, id: string, _opts?: LoadOptions): Promise<Conversation | null> {
    const state = this.table.rows.get(key(tenantId, id));
    return state ? Conversation.rehydrate(clone(state)) : null;
  }

  async findWithCalls(
    tenantId: string,
    id: string,
    only?: { externalIds: readonly string[] },
  ): Promise<ConversationWithCalls | null> {
    const state = this.table.rows.get(key(tenantId, id));
    if (!state) return null;
    const calls = only
      ? state.toolCalls.filter((t) => t.externalId != null && only.externalIds.includes(t.externalId))
      : state.toolCalls;
    return { conversation: Conversation.rehydrate(clone(state)), toolCalls: clone(calls) };
  }

  async findByToolCallId(tenantId: string, toolCallId: string, opts?: LoadOptions): Promise<Conversation | null> {
    for (const state of this.table.rows.values()) {
      if (state.tenantId === tenantId && state.toolCalls.some((t) => t.id === toolCallId))
        return this.findById(tenantId, state.id, opts);
    }
    return null;
  }

  async save(c: Conversation): Promise<void> {
    if (!this.uow.inTransaction) throw new NotInUnitOfWorkError('Aggregates are saved inside a unit of work only');
    const { added, changed } = c.pullChangedCalls();
    const events = c.pullEvents();
    const k = key(c.tenantId, c.id);
    const stored = this.table.rows.get(k);
    if (c.version === 0) {
      if (stored) throw new DuplicateKeyError(`conversation ${c.id} already exists`);
    } else if (!stored || stored.version !== c.version) {
      throw new StaleAggregateError(`conversation ${c.id} changed since it was loaded`);
    }
    const calls = stored ? [...stored.toolCalls] : [];
    for (const t of added) {
      if (this.callExists(c.tenantId, t.id)) throw new DuplicateKeyError(`tool call ${t.id} already exists`);
      calls.push(clone(t.snapshot()) as ToolCallState);
    }
    for (const t of changed) {
      const i = calls.findIndex((s) => s.id === t.id);
      if (i >= 0) calls[i] = clone(t.snapshot()) as ToolCallState; // UPDATE … WHERE id: no row, no change
    }
    // As the database returns them: ORDER BY created_at, id.
    calls.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.table.rows.set(
      k,
      clone({
        id: c.id,
        tenantId: c.tenantId,
        agentId: c.agentId,
        user: c.user,
        title: c.title,
        metadata: c.metadata,
        createdAt: c.createdAt,
        updatedAt: c.updatedAt,
        version: c.version + 1,
        toolCalls: calls,
      }),
    );
    c.version += 1;
    this.uow.collect(events);
  }

  async findWithOpenCalls(tenantId: string, target: HaltTarget): Promise<string[]> {
    return [...this.table.rows.values()]
      .filter((s) => s.tenantId === tenantId)
      .filter((s) =>
        target.scope === 'agent'
          ? s.agentId === target.id
          : target.scope === 'conversation'
            ? s.id === target.id
            : true,
      )
      .filter((s) => s.toolCalls.some((t) => t.status === 'pending' || t.status === 'approved'))
      .map((s) => s.id)
      .sort();
  }

  async findWithDueExpiries(now: Date, limit: number): Promise<Array<{ tenantId: string; conversationId: string }>> {
    const due: Array<{ tenantId: string; conversationId: string }> = [];
    for (const s of this.table.rows.values()) {
      const due_ = (t: (typeof s.toolCalls)[number]) =>
        t.status === 'pending' &&
        ((t.approval && t.approval.expiresAt.getTime() <= now.getTime()) ||
          (t.followUp?.nextAt && t.followUp.nextAt.getTime() <= now.getTime()));
      if (s.toolCalls.some(due_)) {
        due.push({ tenantId: s.tenantId, conversationId: s.id });
      }
    }
    return due.slice(0, limit);
  }

  /** The stored state, for assertions (a copy). */
  stored(tenantId: string, id: string): ConversationState | undefined {
    const s = this.table.rows.get(key(tenantId, id));
    return s && clone(s);
  }

  get size(): number {
    return this.table.rows.size;
  }

  private callExists(tenantId: string, toolCallId: string): boolean {
    for (const s of this.table.rows.values())
      if (s.tenantId === tenantId && s.toolCalls.some((t) => t.id === toolCallId)) return true;
    return false;
  }
}

// ---------------------------------------------------------------- tools

export class InMemoryToolRepository implements ToolRepository {
  private readonly table = new Table<ToolState>();

  constructor(private readonly uow: InMemoryUnitOfWork) {
    uow.enlist(this.table);
  }

  async find(tenantId: string, name: string, _opts?: LoadOptions): Promise<Tool | null> {
    const s = this.table.rows.get(key(tenantId, name));
    return s ? Tool.rehydrate(clone(s)) : null;
  }

  async findMany(tenantId: string, names: string[]): Promise<Tool[]> {
    return names.flatMap((n) => {
      const s = this.table.rows.get(key(tenantId, n));
      return s ? [Tool.rehydrate(clone(s))] : [];
    });
  }

  async findAll(tenantId: string): Promise<Tool[]> {
    return [...this.table.rows.entries()]
      .filter(([k]) => k.startsWith(key(tenantId, '')))
      .map(([, s]) => Tool.rehydrate(clone(s)))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Like TypeOrmToolRepository: nothing to write without events; insert at version 0, else version-checked update. */
  async save(tool: Tool): Promise<void> {
    if (!this.uow.inTransaction) throw new NotInUnitOfWorkError('Aggregates are saved inside a unit of work only');
    const events = tool.pullEvents();
    if (events.length === 0) return;
    const s = tool.snapshot();
    const k = key(s.tenantId, s.name);
    const stored = this.table.rows.get(k);
    if (tool.version === 0) {
      if (stored) throw new DuplicateKeyError(`tool ${s.name} already exists`);
    } else if (!stored || stored.version !== tool.version) {
      throw new StaleAggregateError(`tool ${s.name} changed since it was loaded`);
    }
    this.table.rows.set(k, clone({ ...s, createdAt: stored?.createdAt ?? s.createdAt, version: tool.version + 1 }));
    tool.version += 1;
    this.uow.collect(events);
  }
}

// ---------------------------------------------------------------- policies

interface PolicyVersionRow {
  version: number;
  document: PolicyDocumentJson;
  createdAt: Date;
  createdBy: string;
}

/** Policies as versions, like TypeOrmPolicyRepository: (tenant, version) is the key, so a concurrent PUT loses. */
export class InMemoryPolicyRepository implements PolicyRepository {
  private readonly table = new Table<PolicyVersionRow[]>();

  constructor(private readonly uow: InMemoryUnitOfWork) {
    uow.enlist(this.table);
  }

  /** `lock`: units of work here run one at a time, which is what the real lock gives a tenant's policy writers. */
  async current(tenantId: string, opts: { lock?: boolean } = {}): Promise<TenantPolicy> {
    if (opts.lock && !this.uow.inTransaction)
      throw new NotInUnitOfWorkError('The policy is locked for a write inside a unit of work only');
    const versions = this.table.rows.get(tenantId) ?? [];
    const row = versions.reduce<PolicyVersionRow | undefined>(
      (best, r) => (!best || r.version > best.version ? r : best),
      undefined,
    );
    if (!row) return TenantPolicy.initial(tenantId);
    return TenantPolicy.rehydrate({
      tenantId,
      version: row.version,
      document: PolicyDocument.restore(clone(row.document)),
      updatedAt: row.createdAt,
      updatedBy: row.createdBy,
    });
  }

  async save(policy: TenantPolicy): Promise<void> {
    if (!this.uow.inTransaction) throw new NotInUnitOfWorkError('Aggregates are saved inside a unit of work only');
    const events = policy.pullEvents();
    if (events.length === 0) return;
    const versions = this.table.rows.get(policy.tenantId) ?? [];
    if (versions.some((r) => r.version === policy.policyVersion))
      throw new DuplicateKeyError(`policy version ${policy.policyVersion} already exists`);
    this.table.rows.set(policy.tenantId, [
      ...versions,
      clone({
        version: policy.policyVersion,
        document: policy.document.toJSON(),
        createdAt: policy.updatedAt!,
        createdBy: policy.updatedBy!,
      }),
    ]);
    this.uow.collect(events);
  }

  /** How many versions the tenant has stored. */
  versions(tenantId: string): number {
    return this.table.rows.get(tenantId)?.length ?? 0;
  }
}

// ---------------------------------------------------------------- grants

export class InMemoryGrantRepository implements GrantRepository {
  private readonly table = new Table<GrantState>();

  constructor(private readonly uow: InMemoryUnitOfWork) {
    uow.enlist(this.table);
  }

  async forTools(tenantId: string, toolNames: string[], now: Date): Promise<Grant[]> {
    if (toolNames.length === 0) return [];
    return [...this.table.rows.values()]
      .filter((g) => g.tenantId === tenantId && toolNames.includes(g.toolName))
      .map((g) => Grant.rehydrate(clone(g)))
      .filter((g) => g.statusAt(now) === 'active');
  }

  async findById(tenantId: string, id: string): Promise<Grant | null> {
    const g = this.table.rows.get(key(tenantId, id));
    return g ? Grant.rehydrate(clone(g)) : null;
  }

  async list(tenantId: string, f: GrantListFilter): Promise<{ grants: Grant[]; nextCursor: string | null }> {
    const all = [...this.table.rows.values()]
      .filter(
        (g) =>
          g.tenantId === tenantId &&
          (f.toolName === undefined || g.toolName === f.toolName) &&
          (f.scope === undefined || g.scope === f.scope) &&
          (f.effect === undefined || (g.effect ?? 'allow') === f.effect),
      )
      .map((g) => Grant.rehydrate(clone(g)))
      .filter((g) => f.status === 'all' || g.statusAt(f.now) === f.status)
      .sort((a, b) => b.snapshot().createdAt.getTime() - a.snapshot().createdAt.getTime() || (a.id < b.id ? 1 : -1));
    const start = f.cursor ? all.findIndex((g) => g.id === f.cursor) + 1 : 0;
    const grants = all.slice(start, start + f.limit);
    return { grants, nextCursor: start + f.limit < all.length ? grants[grants.length - 1].id : null };
  }

  async save(grant: Grant): Promise<void> {
    if (!this.uow.inTransaction) throw new NotInUnitOfWorkError('Aggregates are saved inside a unit of work only');
    const events = grant.pullEvents();
    if (events.length === 0) return;
    const s = grant.snapshot();
    const k = key(s.tenantId, s.id);
    if (events.some((e) => e.type === 'GrantCreated') && this.table.rows.has(k))
      throw new DuplicateKeyError(`grant ${s.id} already exists`);
    this.table.rows.set(k, clone({ ...s }));
    this.uow.collect(events);
  }

  async use(tenantId: string, id: string, n: number): Promise<number | null> {
    if (!this.uow.inTransaction) throw new NotInUnitOfWorkError('A limited grant is used inside a unit of work only');
    const g = this.table.rows.get(key(tenantId, id));
    if (!g || g.usesLeft === undefined || g.usesLeft < n) return null;
    this.table.rows.set(key(tenantId, id), clone({ ...g, usesLeft: g.usesLeft - n }));
    return g.usesLeft - n;
  }

  all(tenantId: string): GrantState[] {
    return [...this.table.rows.values()].filter((g) => g.tenantId === tenantId).map((g) => clone(g));
  }
}

// ---------------------------------------------------------------- halts

export class InMemoryHaltRepository implements HaltRepository {
  private readonly table = new Table<HaltState>();

  constructor(private readonly uow: InMemoryUnitOfWork) {
    uow.enlist(this.table);
  }

  async covering(tenantId: string, agentId: string, conversationId: string): Promise<HaltInForce | null> {
    const mine = [...this.table.rows.values()].filter((h) => h.tenantId === tenantId);
    const found = haltThatApplies(mine, { agentId, conversationId });
    return found ? { scope: found.scope, reason: found.reason } : null;
  }

  async find(tenantId: string, target: HaltTarget, _opts?: LoadOptions): Promise<Halt | null> {
    const s = this.table.rows.get(key(tenantId, target.scope, target.id));
    return s ? Halt.rehydrate(clone(s)) : null;
  }

  async list(tenantId: string): Promise<Halt[]> {
    return [...this.table.rows.values()]
      .filter((h) => h.tenantId === tenantId)
      .sort((a, b) => a.at.getTime() - b.at.getTime())
      .map((h) => Halt.rehydrate(clone(h)));
  }

  /** Like TypeOrmHaltRepository: a resumed halt is deleted, a new one inserted (the key refuses a second). */
  async save(halt: Halt): Promise<void> {
    if (!this.uow.inTransaction) throw new NotInUnitOfWorkError('Aggregates are saved inside a unit of work only');
    const events = halt.pullEvents();
    if (events.length === 0) return;
    const s = halt.snapshot();
    const k = key(s.tenantId, s.scope, s.id);
    if (halt.isResumed) {
      this.table.rows.delete(k);
    } else if (halt.version === 0) {
      if (this.table.rows.has(k)) throw new DuplicateKeyError(`halt ${s.scope} ${s.id} already exists`);
      this.table.rows.set(k, clone({ ...s }));
      halt.version = 1;
    }
    this.uow.collect(events);
  }
}

// ---------------------------------------------------------------- clock and ids

/** A clock that moves only when told. Listeners (the fake waiters) hear every move. */
export class FixedClock implements Clock {
  private t: number;
  private readonly listeners: Array<() => void> = [];

  constructor(start: Date | string = '2025-03-01T12:00:00.000Z') {
    this.t = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.t);
  }

  set(at: Date | string): void {
    this.t = new Date(at).getTime();
    this.listeners.forEach((l) => l());
  }

  advance(ms: number): Date {
    this.t += ms;
    this.listeners.forEach((l) => l());
    return this.now();
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }
}

/** `tc_1`, `tc_2`, `grant_1`, …: one counter per prefix. */
export class SequentialIds implements IdGenerator {
  private readonly counters = new Map<string, number>();

  next(prefix: string): string {
    const n = (this.counters.get(prefix) ?? 0) + 1;
    this.counters.set(prefix, n);
    return `${prefix}_${n}`;
  }
}

// ---------------------------------------------------------------- waiters

interface WaitEntry {
  key: string;
  woken: boolean;
  deadline?: number;
  resolve?: () => void;
}

/**
 * ToolCallWaiters without real timers. `next(timeoutMs)` resolves when the call is woken, at
 * shutdown (`shutdown()`), or — when built with a FixedClock — once the clock is moved past
 * `now + timeoutMs`. A wake before `next` is remembered, as in InProcessWaiters.
 */
export class InMemoryWaiters implements ToolCallWaiters {
  closing = false;
  readonly recheckMs = 5_000;
  /** Every timeout a caller of `next` asked for, in ms. */
  readonly timeouts: number[] = [];
  /** Every `wake` call, as `tenant/toolCallId`. */
  readonly wakes: string[] = [];

  private readonly entries = new Set<WaitEntry>();
  private readonly blockedListeners: Array<{ n: number; resolve: () => void }> = [];

  constructor(private readonly clock?: FixedClock) {
    clock?.onChange(() => this.tick());
  }

  watch(tenantId: string, toolCallId: string): Watch {
    const entry: WaitEntry = { key: key(tenantId, toolCallId), woken: false };
    this.entries.add(entry);
    return {
      next: (timeoutMs: number) =>
        new Promise<void>((resolve) => {
          this.timeouts.push(timeoutMs);
          if (entry.woken || this.closing) {
            entry.woken = false;
            return resolve();
          }
          entry.deadline = this.clock ? this.clock.now().getTime() + timeoutMs : undefined;
          entry.resolve = () => {
            entry.resolve = undefined;
            entry.deadline = undefined;
            entry.woken = false;
            resolve();
          };
          this.notifyBlocked();
        }),
      close: () => {
        this.entries.delete(entry);
      },
    };
  }

  wake(tenantId: string, toolCallId: string): void {
    this.wakes.push(`${tenantId}/${toolCallId}`);
    const k = key(tenantId, toolCallId);
    for (const e of this.entries) {
      if (e.key !== k) continue;
      e.woken = true;
      e.resolve?.();
    }
  }

  /** The server is stopping: every wait answers at once. */
  shutdown(): void {
    this.closing = true;
    for (const e of this.entries) e.resolve?.();
  }

  /** Watches still open (not closed). */
  get watching(): number {
    return this.entries.size;
  }

  /** Callers blocked in `next` right now. */
  get blocked(): number {
    return [...this.entries].filter((e) => e.resolve).length;
  }

  /** Resolves once at least `n` callers are blocked in `next`. */
  untilBlocked(n = 1): Promise<void> {
    if (this.blocked >= n) return Promise.resolve();
    return new Promise((resolve) => this.blockedListeners.push({ n, resolve }));
  }

  private notifyBlocked(): void {
    const now = this.blocked;
    for (let i = this.blockedListeners.length - 1; i >= 0; i--) {
      if (now >= this.blockedListeners[i].n) this.blockedListeners.splice(i, 1)[0].resolve();
    }
  }

  private tick(): void {
    const now = this.clock!.now().getTime();
    for (const e of this.entries) if (e.resolve && e.deadline !== undefined && e.deadline <= now) e.resolve();
  }
}

// ---------------------------------------------------------------- receipts

/**
 * Signs by encoding the claims (deterministic, no keys); `digest` is the real one: SHA-256 hex of
 * the RFC 8785 canonical form.
 */
export class FakeReceiptSigner implements ReceiptSigner {
  readonly signed: ReceiptClaims[] = [];

  async sign(claims: ReceiptClaims, identity?: ReceiptIdentity): Promise<string> {
    this.signed.push({ ...claims });
    const body =
      identity === undefined ? claims : { ...claims, jti: identity.jti, iat: identity.issuedAt.toISOString() };
    return `fake-receipt.${Buffer.from(canonicalize(body) ?? 'null').toString('base64url')}`;
  }

  /** The claims a fake receipt carries. */
  static claims(receipt: string): ReceiptClaims {
    const [prefix, body] = receipt.split('.');
    if (prefix !== 'fake-receipt' || !body) throw new Error(`not a fake receipt: ${receipt}`);
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as ReceiptClaims;
  }

  async jwks(): Promise<{ keys: Record<string, unknown>[] }> {
    return { keys: [] };
  }

  async signPayload(payload: Record<string, unknown>, typ: string): Promise<string> {
    return `fake-${typ}.${Buffer.from(canonicalize(payload) ?? 'null').toString('base64url')}`;
  }

  digest(value: unknown): string {
    return createHash('sha256')
      .update(canonicalize(value) ?? 'null')
      .digest('hex');
  }
}

// ---------------------------------------------------------------- all together

export interface InMemoryPorts {
  uow: InMemoryUnitOfWork;
  conversations: InMemoryConversationRepository;
  tools: InMemoryToolRepository;
  policies: InMemoryPolicyRepository;
  grants: InMemoryGrantRepository;
  halts: InMemoryHaltRepository;
  clock: FixedClock;
  ids: SequentialIds;
  waiters: InMemoryWaiters;
  receipts: FakeReceiptSigner;
}

/** One set of fakes sharing a unit of work, a clock and waiters driven by that clock. */
export function inMemoryPorts(start?: Date | string): InMemoryPorts {
  const uow = new InMemoryUnitOfWork();
  const clock = new FixedClock(start);
  return {
    uow,
    conversations: new InMemoryConversationRepository(uow),
    tools: new InMemoryToolRepository(uow),
    policies: new InMemoryPolicyRepository(uow),
    grants: new InMemoryGrantRepository(uow),
    halts: new InMemoryHaltRepository(uow),
    clock,
    ids: new SequentialIds(),
    waiters: new InMemoryWaiters(clock),
    receipts: new FakeReceiptSigner(),
  };
}
