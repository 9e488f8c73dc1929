import { Injectable } from '@nestjs/common';
import type { PersonRepository } from '../../application/ports/person.port';
import type { ChannelIdentity, LinkedBy, Person } from '../../domain/person/person';
import type { Channel } from '../../domain/shared/actor';
import type { DomainEvent } from '../../domain/shared/domain-event';
import { TypeOrmUnitOfWork } from './unit-of-work';

interface PersonRow {
  tenant_id: string;
  id: string;
  name: string | null;
  email: string | null;
  roles: string[];
  first_seen_at: Date;
  last_seen_at: Date;
}

const PERSON_COLUMNS = 'tenant_id, id, name, email, roles, first_seen_at, last_seen_at';
/** Persons sharing one email are refused as ambiguous; reading more than two tells nothing more. */
const EMAIL_MATCHES = 2;

/** Persons and their linked channel users, in hand-written SQL on the unit of work's connection. */
@Injectable()
export class SqlPersons implements PersonRepository {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async seen(p: Pick<Person, 'tenantId' | 'id' | 'name' | 'email' | 'roles'>, at: Date): Promise<void> {
    await this.uow.manager().query(
      `INSERT INTO persons (${PERSON_COLUMNS}) VALUES ($1, $2, $3, $4, $5::text[], $6, $6)
       ON CONFLICT (tenant_id, id) DO UPDATE
         SET name = EXCLUDED.name, email = EXCLUDED.email, roles = EXCLUDED.roles,
             last_seen_at = GREATEST(persons.last_seen_at, EXCLUDED.last_seen_at)`,
      [p.tenantId, p.id, p.name ?? null, p.email ?? null, [...p.roles], at],
    );
  }

  async find(tenantId: string, id: string): Promise<Person | null> {
    const [r]: PersonRow[] = await this.uow
      .manager()
      .query(`SELECT ${PERSON_COLUMNS} FROM persons WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
    return r ? person(r) : null;
  }

  /**
   * Persons with no role are left out here, not after: with LIMIT, two role-less persons claiming an address would
   * otherwise hide its one real owner (see linkByEmail).
   */
  async withEmail(tenantId: string, email: string): Promise<Person[]> {
    const rows: PersonRow[] = await this.uow.manager().query(
      `SELECT ${PERSON_COLUMNS} FROM persons
       WHERE tenant_id = $1 AND lower(email) = lower($2) AND email IS NOT NULL AND cardinality(roles) > 0
       ORDER BY id LIMIT ${EMAIL_MATCHES}`,
      [tenantId, email],
    );
    return rows.map(person);
  }

  /** Role people through `roles &&` (no index: a tenant's persons are few and read once per request reached). */
  async reachable(tenantId: string, who: { roles: string[]; named: string[] }, limit: number): Promise<Person[]> {
    if (who.roles.length === 0 && who.named.length === 0) return [];
    const rows: PersonRow[] = await this.uow.manager().query(
      `SELECT ${PERSON_COLUMNS} FROM persons
       WHERE tenant_id = $1
         AND (roles && $2::text[] OR lower(id) = ANY($3::text[]) OR lower(email) = ANY($3::text[]))
       ORDER BY id LIMIT $4`,
      [tenantId, who.roles, who.named, limit],
    );
    return rows.map(person);
  }

  async linkOf(tenantId: string, channel: Channel, channelUser: string): Promise<ChannelIdentity | null> {
    const [r]: Array<{ person_id: string; linked_by: LinkedBy; linked_at: Date }> = await this.uow
      .manager()
      .query(
        `SELECT person_id, linked_by, linked_at FROM person_identities WHERE tenant_id = $1 AND channel = $2 AND channel_user = $3`,
        [tenantId, channel, channelUser],
      );
    return r
      ? { tenantId, channel, channelUser, personId: r.person_id, linkedBy: r.linked_by, linkedAt: r.linked_at }
      : null;
  }

  async channelUsersOf(tenantId: string, channel: Channel, personIds: readonly string[]): Promise<string[]> {
    if (personIds.length === 0) return [];
    const rows: Array<{ channel_user: string }> = await this.uow.manager().query(
      `SELECT channel_user FROM person_identities
       WHERE tenant_id = $1 AND person_id = ANY($2::text[]) AND channel = $3
       ORDER BY person_id, channel_user LIMIT 100`,
      [tenantId, [...personIds], channel],
    );
    return rows.map((r) => r.channel_user);
  }

  async link(i: ChannelIdentity): Promise<void> {
    await this.uow.manager().query(
      `INSERT INTO person_identities (tenant_id, channel, channel_user, person_id, linked_by, linked_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (tenant_id, channel, channel_user) DO UPDATE
         SET person_id = EXCLUDED.person_id, linked_by = EXCLUDED.linked_by, linked_at = EXCLUDED.linked_at`,
      [i.tenantId, i.channel, i.channelUser, i.personId, i.linkedBy, i.linkedAt],
    );
  }

  async record(events: DomainEvent[]): Promise<void> {
    this.uow.collect(events);
  }
}

function person(r: PersonRow): Person {
  return {
    tenantId: r.tenant_id,
    id: r.id,
    ...(r.name !== null ? { name: r.name } : {}),
    ...(r.email !== null ? { email: r.email } : {}),
    roles: r.roles,
    firstSeenAt: new Date(r.first_seen_at),
    lastSeenAt: new Date(r.last_seen_at),
  };
}
