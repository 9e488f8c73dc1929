import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';

export const GENESIS = '0'.repeat(64);

/** An events row as the table holds it (the audit log's own row type). */
import type { RawEvent as EventRecord } from '../../src/infrastructure/persistence/sql-audit-log';
export type { EventRecord };

export function eventsOf(ds: DataSource, tenant: string): Promise<EventRecord[]> {
  return ds.query(
    `SELECT tenant_id, seq, id, type, at, recorded_at, instance_id, correlation_id, conversation_id, tool_call_id, tool_name, actor, data, prev_hash, hash
       FROM events WHERE tenant_id = $1 ORDER BY seq`,
    [tenant],
  );
}

/**
 * CONTRACT §11: hash = sha256hex(prevHash + JCS(event without hash)), recomputed here independently of the
 * service's code from the event as the API shows it.
 */
export function recomputedHash(r: EventRecord): string {
  const event = {
    seq: Number(r.seq),
    id: r.id,
    type: r.type,
    at: new Date(r.at).toISOString(),
    recordedAt: new Date(r.recorded_at).toISOString(),
    tenant: r.tenant_id,
    instanceId: r.instance_id,
    ...(r.correlation_id !== null ? { correlationId: r.correlation_id } : {}),
    ...(r.conversation_id !== null ? { conversationId: r.conversation_id } : {}),
    ...(r.tool_call_id !== null ? { toolCallId: r.tool_call_id } : {}),
    ...(r.tool_name !== null ? { toolName: r.tool_name } : {}),
    actor: r.actor,
    data: r.data,
    prevHash: r.prev_hash,
  };
  return createHash('sha256')
    .update(r.prev_hash + canonicalize(event))
    .digest('hex');
}

/** The hash of an event as the API returns it: everything but `hash`. */
export function recomputedApiHash(event: Record<string, unknown>): string {
  const { hash: _hash, ...rest } = event;
  return createHash('sha256')
    .update(String(event.prevHash) + canonicalize(rest))
    .digest('hex');
}

/** seq 1..N without gaps, each prevHash the hash before it (so no two events share a parent), every hash recomputable. */
export function expectIntactChain(events: EventRecord[]): void {
  expect(events.length).toBeGreaterThan(0);
  expect(events.map((e) => Number(e.seq))).toEqual(events.map((_, i) => i + 1));
  expect(events.map((e) => e.prev_hash)).toEqual([GENESIS, ...events.slice(0, -1).map((e) => e.hash)]);
  expect(new Set(events.map((e) => e.prev_hash)).size).toBe(events.length);
  expect(events.map(recomputedHash)).toEqual(events.map((e) => e.hash));
}
