import { Injectable } from '@nestjs/common';
import { PolicyDocument } from '../../domain/policy/policy-document';
import { TenantPolicy } from '../../domain/policy/tenant-policy.aggregate';
import { PolicyRepository } from '../../application/ports';
import { PolicyHistory, PolicyVersionRecord, PolicyVersionSummary } from '../../application/ports/policy-history.port';
import { JsonObject, PolicyVersionRow } from './orm-entities';
import { TypeOrmUnitOfWork } from './unit-of-work';

const MAX_CACHED_TENANTS = 10_000;

/**
 * Policies are stored as versions, keyed (tenant_id, version). A writer locks its tenant's policy first
 * (`current(…, { lock: true })`), so concurrent PUTs take versions one after another instead of racing for
 * the same key; the key stays the backstop.
 */
@Injectable()
export class TypeOrmPolicyRepository implements PolicyRepository, PolicyHistory {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  /**
   * Parsed documents by tenant and version. Versions never change once written, so the cache needs no
   * invalidation across instances: each read asks the database which version is current (a primary-key
   * lookup) and parses a document only the first time this instance sees that version.
   */
  private readonly parsed = new Map<
    string,
    { version: number; document: PolicyDocument; updatedAt: Date; updatedBy: string }
  >();

  async current(tenantId: string, opts: { lock?: boolean } = {}): Promise<TenantPolicy> {
    if (opts.lock) {
      if (!this.uow.inTransaction) throw new Error('The policy is locked for a write inside a unit of work only');
      // An advisory lock, not a row lock: a tenant without a policy has no row to lock. Released at commit.
      await this.uow
        .manager()
        .query(`SELECT pg_advisory_xact_lock(hashtextextended('tollgate.policy:' || $1, 0))`, [tenantId]);
    }
    const [head]: Array<{ version: number }> = await this.uow
      .manager()
      .query(`SELECT version FROM policy_versions WHERE tenant_id = $1 ORDER BY version DESC LIMIT 1`, [tenantId]);
    return this.atVersion(tenantId, head?.version ?? null);
  }

  /** The policy at a version read as current (null: none yet); the document is parsed once per version. */
  async atVersion(tenantId: string, version: number | null): Promise<TenantPolicy> {
    if (version === null) return TenantPolicy.initial(tenantId);
    let hit = this.parsed.get(tenantId);
    if (!hit || hit.version !== version) {
      const row = await this.uow.manager().getRepository(PolicyVersionRow).findOneByOrFail({ tenantId, version });
      hit = {
        version: row.version,
        document: PolicyDocument.restore(row.document),
        updatedAt: row.createdAt,
        updatedBy: row.createdBy,
      };
      if (this.parsed.size >= MAX_CACHED_TENANTS) this.parsed.delete(this.parsed.keys().next().value!);
      this.parsed.set(tenantId, hit);
    }
    return TenantPolicy.rehydrate({ tenantId, ...hit });
  }

  async save(policy: TenantPolicy): Promise<void> {
    const events = policy.pullEvents();
    if (events.length === 0) return;
    await this.uow
      .manager()
      .getRepository(PolicyVersionRow)
      .insert({
        tenantId: policy.tenantId,
        version: policy.policyVersion,
        document: policy.document.toJSON() as unknown as JsonObject,
        createdAt: policy.updatedAt!,
        createdBy: policy.updatedBy!,
      });
    this.uow.collect(events);
  }

  /** Newest first, keyset-paged on the primary key; the rule count is read from the stored document. */
  async list(tenantId: string, page: { before?: number; limit: number }): Promise<PolicyVersionSummary[]> {
    const rows: Array<{ version: number; created_at: Date; created_by: string; rules: number }> = await this.uow
      .manager()
      .query(
        `SELECT version, created_at, created_by, COALESCE(jsonb_array_length(document->'rules'), 0)::int AS rules
         FROM policy_versions WHERE tenant_id = $1 AND version < $2 ORDER BY version DESC LIMIT $3`,
        [tenantId, page.before ?? 2_147_483_647, page.limit],
      );
    return rows.map((r) => ({
      version: Number(r.version),
      createdAt: new Date(r.created_at),
      createdBy: r.created_by,
      rules: Number(r.rules),
    }));
  }

  /** One stored version; its document restored as stored (checks added since are not applied again). */
  async get(tenantId: string, version: number): Promise<PolicyVersionRecord | null> {
    const row = await this.uow.manager().getRepository(PolicyVersionRow).findOneBy({ tenantId, version });
    return (
      row && {
        version: row.version,
        createdAt: row.createdAt,
        createdBy: row.createdBy,
        document: PolicyDocument.restore(row.document),
      }
    );
  }
}
