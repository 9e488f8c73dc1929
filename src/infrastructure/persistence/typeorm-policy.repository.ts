import { Injectable } from '@nestjs/common';
import { PolicyDocument } from '../../domain/policy/policy-document';
import { TenantPolicy } from '../../domain/policy/tenant-policy.aggregate';
import { PolicyRepository } from '../../application/ports';
import { JsonObject, PolicyVersionRow } from './orm-entities';
import { TypeOrmUnitOfWork } from './unit-of-work';

/** Policies are stored as versions; the primary key (tenant_id, version) makes a concurrent PUT lose and retry. */
@Injectable()
export class TypeOrmPolicyRepository implements PolicyRepository {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async current(tenantId: string): Promise<TenantPolicy> {
    const row = await this.uow.manager().getRepository(PolicyVersionRow).findOne({ where: { tenantId }, order: { version: 'DESC' } });
    if (!row) return TenantPolicy.initial(tenantId);
    return TenantPolicy.rehydrate({
      tenantId,
      version: row.version,
      document: PolicyDocument.parse(row.document),
      updatedAt: row.createdAt,
      updatedBy: row.createdBy,
    });
  }

  async save(policy: TenantPolicy): Promise<void> {
    const events = policy.pullEvents();
    if (events.length === 0) return;
    await this.uow.manager().getRepository(PolicyVersionRow).insert({
      tenantId: policy.tenantId,
      version: policy.policyVersion,
      document: policy.document.toJSON() as unknown as JsonObject,
      createdAt: policy.updatedAt!,
      createdBy: policy.updatedBy!,
    });
    this.uow.collect(events);
  }
}
