import { Injectable } from '@nestjs/common';
import type { DelegationFrom, DelegationPage, DelegationRepository } from '../../application/ports/delegation.port';
import { decodeCursor, encodeCursor } from './keyset-cursor';
import type { Delegation } from '../../domain/person/delegation';
import type { Person } from '../../domain/person/person';
import type { DomainEvent } from '../../domain/shared/domain-event';
import { TypeOrmUnitOfWork } from './unit-of-work';

interface DelegationRow {
  tenant_id: string;
  person_id: string;
  to_person_id: string;
  starts_at: Date;
  ends_at: Date;
  reason: string | null;
  created_at: Date;
}

/** A person's columns, prefixed, as the joins below read them. */
interface PersonColumns {
  p_id: string | null;
  p_name: string | null;
  p_email: string | null;
  p_roles: string[] | null;
  p_first_seen_at: Date | null;
  p_last_seen_at: Date | null;
}

const COLUMNS = 'd.tenant_id, d.person_id, d.to_person_id, d.starts_at, d.ends_at, d.reason, d.created_at';
const PERSON = (alias: string) =>
  `${alias}.id AS p_id, ${alias}.name AS p_name, ${alias}.email AS p_email, ${alias}.roles AS p_roles, ` +
  `${alias}.first_seen_at AS p_first_seen_at, ${alias}.last_seen_at AS p_last_seen_at`;

/**
 * Delegations in hand-written SQL on the unit of work's connection. Whether one holds is asked at a given instant
 * (`starts_at <= at < ends_at`); the domain asks again (delegation.ts holdsAt) and decides what it means.
 */
@Injectable()
export class SqlDelegations implements DelegationRepository {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async of(tenantId: string, personId: string, opts: { lock?: boolean } = {}): Promise<Delegation | null> {
    const lock = opts.lock && this.uow.inTransaction ? ' FOR UPDATE' : '';
    const [r]: DelegationRow[] = await this.uow
      .manager()
      .query(`SELECT ${COLUMNS} FROM delegations d WHERE d.tenant_id = $1 AND d.person_id = $2${lock}`, [
        tenantId,
        personId,
      ]);
    return r ? delegation(r) : null;
  }

  async put(d: Delegation): Promise<void> {
    await this.uow.manager().query(
      `INSERT INTO delegations (tenant_id, person_id, to_person_id, starts_at, ends_at, reason, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (tenant_id, person_id) DO UPDATE
         SET to_person_id = EXCLUDED.to_person_id, starts_at = EXCLUDED.starts_at, ends_at = EXCLUDED.ends_at,
             reason = EXCLUDED.reason, created_at = EXCLUDED.created_at`,
      [d.tenantId, d.personId, d.toPersonId, d.startsAt, d.endsAt, d.reason ?? null, d.createdAt],
    );
  }

  async remove(tenantId: string, personId: string): Promise<void> {
    await this.uow
      .manager()
      .query(`DELETE FROM delegations WHERE tenant_id = $1 AND person_id = $2`, [tenantId, personId]);
  }

  toPerson(tenantId: string, personId: string, at: Date, limit: number): Promise<DelegationFrom[]> {
    return this.toPersons(tenantId, [personId], at, limit);
  }

  async toPersons(tenantId: string, personIds: readonly string[], at: Date, limit: number): Promise<DelegationFrom[]> {
    if (personIds.length === 0) return [];
    const rows: Array<DelegationRow & PersonColumns> = await this.uow.manager().query(
      `SELECT ${COLUMNS}, ${PERSON('p')}
         FROM delegations d JOIN persons p ON p.tenant_id = d.tenant_id AND p.id = d.person_id
        WHERE d.tenant_id = $1 AND d.to_person_id = ANY($2::text[]) AND d.starts_at <= $3 AND d.ends_at > $3
        ORDER BY d.to_person_id, d.person_id LIMIT $4`,
      [tenantId, [...personIds], at, limit],
    );
    return rows.map((r) => ({ delegation: delegation(r), delegator: person(tenantId, r)! }));
  }

  async fromPersons(
    tenantId: string,
    personIds: readonly string[],
    at: Date,
    limit: number,
  ): Promise<Array<{ delegation: Delegation; delegate: Person }>> {
    if (personIds.length === 0) return [];
    const rows: Array<DelegationRow & PersonColumns> = await this.uow.manager().query(
      `SELECT ${COLUMNS}, ${PERSON('p')}
         FROM delegations d JOIN persons p ON p.tenant_id = d.tenant_id AND p.id = d.to_person_id
        WHERE d.tenant_id = $1 AND d.person_id = ANY($2::text[]) AND d.starts_at <= $3 AND d.ends_at > $3
        ORDER BY d.to_person_id, d.person_id LIMIT $4`,
      [tenantId, [...personIds], at, limit],
    );
    return rows.map((r) => ({ delegation: delegation(r), delegate: person(tenantId, r)! }));
  }

  async countTo(tenantId: string, personId: string, at: Date, except: string): Promise<number> {
    const [{ n }]: Array<{ n: string }> = await this.uow.manager().query(
      `SELECT count(*) AS n FROM delegations
        WHERE tenant_id = $1 AND to_person_id = $2 AND ends_at > $3 AND person_id <> $4`,
      [tenantId, personId, at, except],
    );
    return Number(n);
  }

  async list(tenantId: string, at: Date, page: { cursor?: string; limit: number }): Promise<DelegationPage> {
    const after = decodeCursor(page.cursor);
    const rows: Array<DelegationRow & { f_name: string | null; t_name: string | null }> = await this.uow
      .manager()
      .query(
        `SELECT ${COLUMNS}, f.name AS f_name, t.name AS t_name
           FROM delegations d
           JOIN persons f ON f.tenant_id = d.tenant_id AND f.id = d.person_id
           JOIN persons t ON t.tenant_id = d.tenant_id AND t.id = d.to_person_id
          WHERE d.tenant_id = $1 AND d.ends_at > $2 AND ($3::text IS NULL OR d.person_id > $3)
          ORDER BY d.person_id LIMIT $4`,
        [tenantId, at, after?.[1] ?? null, page.limit + 1],
      );
    const items = rows.slice(0, page.limit).map((r) => ({
      delegation: delegation(r),
      ...(r.f_name !== null ? { delegatorName: r.f_name } : {}),
      ...(r.t_name !== null ? { delegateName: r.t_name } : {}),
    }));
    const last = items[items.length - 1];
    return { items, nextCursor: rows.length > page.limit ? encodeCursor(['', last.delegation.personId]) : null };
  }

  async isAgent(tenantId: string, id: string): Promise<boolean> {
    // On conversations_by_agent: one row tells.
    const rows: unknown[] = await this.uow
      .manager()
      .query(`SELECT 1 FROM conversations WHERE tenant_id = $1 AND agent_id = $2 LIMIT 1`, [tenantId, id]);
    return rows.length > 0;
  }

  async record(events: DomainEvent[]): Promise<void> {
    this.uow.collect(events);
  }
}

function delegation(r: DelegationRow): Delegation {
  return {
    tenantId: r.tenant_id,
    personId: r.person_id,
    toPersonId: r.to_person_id,
    startsAt: new Date(r.starts_at),
    endsAt: new Date(r.ends_at),
    ...(r.reason !== null ? { reason: r.reason } : {}),
    createdAt: new Date(r.created_at),
  };
}

function person(tenantId: string, r: PersonColumns): Person | null {
  if (r.p_id === null) return null;
  return {
    tenantId,
    id: r.p_id,
    ...(r.p_name !== null ? { name: r.p_name } : {}),
    ...(r.p_email !== null ? { email: r.p_email } : {}),
    roles: r.p_roles ?? [],
    firstSeenAt: new Date(r.p_first_seen_at!),
    lastSeenAt: new Date(r.p_last_seen_at!),
  };
}
