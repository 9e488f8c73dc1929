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
 * Appends events to a tenant's hash chain. The chain head row is locked for the rest of the
 * transaction, so concurrent writers of one tenant queue there: no forks and no gaps in `seq`.
 */
@Injectable()
export class EventStore {
  constructor(@Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig) {}

  async append(manager: EntityManager, events: DomainEvent[]): Promise<StoredEvent[]> {
    const stored: StoredEvent[] = [];
    const byTenant = new Map<string, DomainEvent[]>();
    for (const e of events) byTenant.set(e.tenantId, [...(byTenant.get(e.tenantId) ?? []), e]);
    for (const [tenant, list] of byTenant) stored.push(...(await this.appendForTenant(manager, tenant, list)));
    return stored;
  }

  private async appendForTenant(manager: EntityManager, tenant: string, events: DomainEvent[]): Promise<StoredEvent[]> {
    const [head] = await manager.query(
      `INSERT INTO audit_heads (tenant_id, seq, hash) VALUES ($1, 0, $2)
       ON CONFLICT (tenant_id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id
       RETURNING seq, hash`,
      [tenant, GENESIS_HASH],
    );
    let seq = Number(head.seq);
    let prevHash: string = head.hash;
    const recordedAt = new Date();
    const correlationId = RequestContexts.current()?.correlationId;
    const rows: Partial<EventRow>[] = [];
    const stored: StoredEvent[] = [];
    for (const e of events) {
      seq += 1;
      const json: ChainedEventJson = {
        seq,
        id: randomUUID(),
        type: e.type,
        at: e.at.toISOString(),
        recordedAt: recordedAt.toISOString(),
        tenant,
        instanceId: this.config.instanceId,
        ...(correlationId ? { correlationId } : {}),
        ...(e.conversationId ? { conversationId: e.conversationId } : {}),
        ...(e.toolCallId ? { toolCallId: e.toolCallId } : {}),
        ...(e.toolName ? { toolName: e.toolName } : {}),
        actor: plain(e.actor),
        data: withDigests(plain(e.data)),
        prevHash,
      };
      const hash = eventHash(prevHash, json);
      rows.push({
        tenantId: tenant,
        seq: String(seq),
        id: json.id,
        type: e.type,
        at: e.at,
        recordedAt,
        instanceId: json.instanceId,
        correlationId: correlationId ?? null,
        conversationId: e.conversationId ?? null,
        toolCallId: e.toolCallId ?? null,
        toolName: e.toolName ?? null,
        actor: json.actor,
        data: json.data,
        prevHash,
        hash,
      });
      stored.push({ ...e, seq, id: json.id, prevHash, hash });
      prevHash = hash;
    }
    await manager.createQueryBuilder().insert().into(EventRow).values(rows).execute();
    await manager.query(`UPDATE audit_heads SET seq = $2, hash = $3 WHERE tenant_id = $1`, [tenant, seq, prevHash]);
    // Other instances' long-polls learn of decisions and expiries on commit (never of a rollback).
    // Not sent on the auto-approve hot path: nobody waits on a call that was never pending.
    if (this.config.databaseUrl) {
      const wakes = [...new Set(events.filter(wakesWaiters).map((e) => wakePayload(tenant, e.toolCallId!)))];
      if (wakes.length > 0) await manager.query(`SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, [WAKE_CHANNEL, wakes]);
    }
    return stored;
  }
}
