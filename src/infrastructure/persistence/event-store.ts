import { Inject, Injectable } from '@nestjs/common';
import canonicalize from 'canonicalize';
import { createHash, randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { DomainEvent } from '../../domain/shared/domain-event';
import { StoredEvent } from '../../application/ports/stored-event';
import { TOLLGATE_CONFIG, TollgateConfig } from '../config/config';
import { EventRow } from './orm-entities';

export const GENESIS_HASH = '0'.repeat(64);

/** The event as the contract shows it, without `hash`: what the chain hashes (RFC 8785 JCS). */
export interface ChainedEventJson {
  seq: number;
  id: string;
  type: string;
  at: string;
  tenant: string;
  conversationId?: string;
  toolCallId?: string;
  toolName?: string;
  actor: Record<string, unknown>;
  data: Record<string, unknown>;
  prevHash: string;
}

export function eventHash(prevHash: string, event: ChainedEventJson): string {
  return createHash('sha256')
    .update(prevHash + canonicalize(event))
    .digest('hex');
}

/** Plain JSON (dates as ISO strings, no undefined): what jsonb stores is what was hashed. */
function plain<T>(v: T): Record<string, unknown> {
  return JSON.parse(JSON.stringify(v ?? {}));
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
    const rows: Partial<EventRow>[] = [];
    const stored: StoredEvent[] = [];
    for (const e of events) {
      seq += 1;
      const json: ChainedEventJson = {
        seq,
        id: randomUUID(),
        type: e.type,
        at: e.at.toISOString(),
        tenant,
        ...(e.conversationId ? { conversationId: e.conversationId } : {}),
        ...(e.toolCallId ? { toolCallId: e.toolCallId } : {}),
        ...(e.toolName ? { toolName: e.toolName } : {}),
        actor: plain(e.actor),
        data: plain(e.data),
        prevHash,
      };
      const hash = eventHash(prevHash, json);
      rows.push({
        tenantId: tenant,
        seq: String(seq),
        id: json.id,
        type: e.type,
        at: e.at,
        instanceId: this.config.instanceId,
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
    return stored;
  }
}
