import { Inject, Injectable } from '@nestjs/common';
import canonicalize from 'canonicalize';
import { createHash, randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { DomainEvent } from '../../domain/shared/domain-event';
import { StoredEvent } from '../../application/ports/stored-event';
import type { AuditEvent } from '../../application/ports/audit-log.port';
import { TOLLGATE_CONFIG, TollgateConfig } from '../config/config';
import { RequestContexts } from '../context/request-context';
import { EventRow } from './orm-entities';
import { wakesWaiters } from '../../application/events/wake-waiters.handler';
import { WAKE_CHANNEL, wakePayload } from '../waiting/pg-wake-listener';

export const GENESIS_HASH = '0'.repeat(64);

/**
 * An audit event exactly as the API shows it, without `hash`: what the chain hashes (RFC 8785 JCS).
 * Anyone holding an export can recompute `hash = sha256hex(prevHash + JCS(event without hash))`.
 */
export type ChainedEventJson = Omit<AuditEvent, 'hash'>;
export type EventJson = AuditEvent;

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function digestJson(value: unknown): string {
  return sha256Hex(canonicalize(value) ?? 'null');
}

export function eventHash(prevHash: string, event: ChainedEventJson): string {
  return sha256Hex(prevHash + canonicalize(event));
}

/** Rebuilds the hashed JSON of a stored row; verify, queries and exports all go through here. */
export function eventJsonFromRow(r: EventRow): EventJson {
  return {
    seq: Number(r.seq),
    id: r.id,
    type: r.type,
    at: r.at.toISOString(),
    recordedAt: r.recordedAt.toISOString(),
    tenant: r.tenantId,
    instanceId: r.instanceId,
    ...(r.correlationId !== null ? { correlationId: r.correlationId } : {}),
    ...(r.conversationId !== null ? { conversationId: r.conversationId } : {}),
    ...(r.toolCallId !== null ? { toolCallId: r.toolCallId } : {}),
    ...(r.toolName !== null ? { toolName: r.toolName } : {}),
    actor: r.actor,
    data: r.data,
    prevHash: r.prevHash,
    hash: r.hash,
  };
}

/** Plain JSON (dates as ISO strings, no undefined): what jsonb stores is what was hashed. */
function plain(v: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(v ?? {}));
}

/** Digests of what ran or was asked to run, so an auditor can match a receipt or a backend log without the payload. */
function withDigests(data: Record<string, unknown>): Record<string, unknown> {
  const out = { ...data };
  if (data.arguments !== undefined) out.argumentsDigest = digestJson(data.arguments);
  if (data.editedArguments !== undefined) out.editedArgumentsDigest = digestJson(data.editedArguments);
  return out;
}

/**
 * The event's canonical JSON (RFC 8785, as `canonicalize` writes it) split around the values of `prevHash`
 * and `seq`, which only the database knows once it holds the chain head:
 * `canonicalize(event) === head + prevHash + mid + String(seq) + tail`.
 */
export function chainTemplate(event: Omit<ChainedEventJson, 'seq' | 'prevHash'>): {
  head: string;
  mid: string;
  tail: string;
} {
  const PREV = '\u0000prev\u0000';
  const SEQ = '\u0000seq\u0000';
  const all: Record<string, unknown> = { ...event, prevHash: PREV, seq: SEQ };
  // JCS orders members by UTF-16 code units, which is what Array#sort does with strings.
  const members = Object.keys(all)
    .filter((k) => all[k] !== undefined)
    .sort()
    .map((k) =>
      k === 'prevHash'
        ? `"prevHash":"${PREV}"`
        : k === 'seq'
          ? `"seq":${SEQ}`
          : `${JSON.stringify(k)}:${canonicalize(all[k])}`,
    );
  const text = `{${members.join(',')}}`;
  const [head, rest] = text.split(`"prevHash":"${PREV}"`);
  const [mid, tail] = rest.split(`"seq":${SEQ}`);
  return { head: `${head}"prevHash":"`, mid: `"${mid}"seq":`, tail };
}

/** One tenant's events ready for `tollgate_append_events`, and the wake-ups to NOTIFY on commit. */
export interface PreparedAppend {
  tenant: string;
  events: DomainEvent[];
  /** Each event's columns and its chain template: `tollgate_append_events`'s parameter, as JSON. */
  records: Array<Record<string, unknown>>;
  ids: string[];
  /** `pg_notify` payloads (ids only) for other instances' long-polls; empty on the auto-approve path. */
  wakes: string[];
}

/** One row of `tollgate_append_events`'s answer. */
export interface ChainedRow {
  out_seq: string | number;
  out_prev_hash: string;
  out_hash: string;
}

export const WAKE_NOTIFY_SQL = `SELECT pg_notify('${WAKE_CHANNEL}', p) FROM unnest($1::text[]) AS p`;

/**
 * Appends events to a tenant's hash chain in one statement (`tollgate_append_events`): the head row is
 * locked from that statement to the commit, so concurrent writers of one tenant queue there, briefly:
 * no forks and no gaps in `seq`. Repositories may append in the statement that writes their rows
 * (`prepare` / `finish`); the unit of work appends whatever else was collected before it commits.
 */
@Injectable()
export class EventStore {
  constructor(@Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig) {}

  async append(manager: EntityManager, events: DomainEvent[]): Promise<StoredEvent[]> {
    const stored: StoredEvent[] = [];
    const byTenant = new Map<string, DomainEvent[]>();
    for (const e of events) byTenant.set(e.tenantId, [...(byTenant.get(e.tenantId) ?? []), e]);
    for (const [tenant, list] of byTenant) {
      const prepared = this.prepare(tenant, list);
      const chained: ChainedRow[] = await manager.query(
        `SELECT out_seq, out_prev_hash, out_hash FROM tollgate_append_events($1, $2::jsonb)`,
        [tenant, JSON.stringify(prepared.records)],
      );
      // Other instances' long-polls learn of decisions and expiries on commit (never of a rollback).
      if (prepared.wakes.length > 0) await manager.query(WAKE_NOTIFY_SQL, [prepared.wakes]);
      stored.push(...this.finish(prepared, chained));
    }
    return stored;
  }

  prepare(tenant: string, events: DomainEvent[]): PreparedAppend {
    const recordedAt = new Date().toISOString();
    const correlationId = RequestContexts.current()?.correlationId;
    const rows = events.map((e) => {
      const json: Omit<ChainedEventJson, 'seq' | 'prevHash'> = {
        id: randomUUID(),
        type: e.type,
        at: e.at.toISOString(),
        recordedAt,
        tenant,
        instanceId: this.config.instanceId,
        ...(correlationId ? { correlationId } : {}),
        ...(e.conversationId ? { conversationId: e.conversationId } : {}),
        ...(e.toolCallId ? { toolCallId: e.toolCallId } : {}),
        ...(e.toolName ? { toolName: e.toolName } : {}),
        actor: plain(e.actor),
        data: withDigests(plain(e.data)),
      };
      return { ...json, ...chainTemplate(json) };
    });
    // Not sent on the auto-approve hot path: nobody waits on a call that was never pending. Only
    // PostgreSQL has other instances to wake; the embedded database has one process.
    const wakes = this.config.databaseUrl
      ? [...new Set(events.filter(wakesWaiters).map((e) => wakePayload(tenant, e.toolCallId!)))]
      : [];
    return { tenant, events, records: rows, ids: rows.map((r) => r.id), wakes };
  }

  finish(prepared: PreparedAppend, chained: ChainedRow[]): StoredEvent[] {
    if (chained.length !== prepared.events.length)
      throw new Error(`appended ${chained.length} of ${prepared.events.length} events`);
    return prepared.events.map((e, i) => ({
      ...e,
      seq: Number(chained[i].out_seq),
      id: prepared.ids[i],
      prevHash: chained[i].out_prev_hash,
      hash: chained[i].out_hash,
    }));
  }
}
