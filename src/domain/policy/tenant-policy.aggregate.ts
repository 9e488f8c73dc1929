import { AggregateRoot } from '../shared/aggregate-root';
import { Actor } from '../shared/actor';
import { PolicyDocument } from './policy-document';
import { PolicyUpdated } from './tenant-policy.events';
import { PolicyVersionInForceError } from './tenant-policy.errors';

export interface TenantPolicyState {
  tenantId: string;
  version: number;
  document: PolicyDocument;
  updatedAt: Date | null;
  updatedBy: string | null;
}

/** A tenant's policy: an integer version per accepted document. Version 0 = built-in defaults. */
export class TenantPolicy extends AggregateRoot {
  private constructor(private s: TenantPolicyState) {
    super(s.tenantId, s.version);
  }

  static initial(tenantId: string): TenantPolicy {
    return new TenantPolicy({
      tenantId,
      version: 0,
      document: PolicyDocument.empty(),
      updatedAt: null,
      updatedBy: null,
    });
  }

  static rehydrate(state: TenantPolicyState): TenantPolicy {
    return new TenantPolicy(state);
  }

  get policyVersion(): number {
    return this.s.version;
  }
  get document(): PolicyDocument {
    return this.s.document;
  }
  get updatedAt(): Date | null {
    return this.s.updatedAt;
  }
  get updatedBy(): string | null {
    return this.s.updatedBy;
  }

  /**
   * Every accepted PUT makes a new version; `onlyIfChanged` (the policy file at start-up)
   * makes one only when the document differs.
   */
  replace(
    document: PolicyDocument,
    by: Actor,
    at: Date,
    opts: { onlyIfChanged?: boolean; source?: string } = {},
  ): boolean {
    if (opts.onlyIfChanged && this.s.version > 0 && this.s.document.equals(document)) return false;
    const previousVersion = this.s.version;
    this.s = { ...this.s, version: previousVersion + 1, document, updatedAt: at, updatedBy: by.id };
    this.record(
      new PolicyUpdated(
        { tenantId: this.tenantId, at, actor: by },
        { version: this.s.version, previousVersion, document: document.toJSON(), source: opts.source ?? 'api' },
      ),
    );
    return true;
  }

  /**
   * A new version whose document is an earlier version's: history is never rewritten. Rolling back to the
   * version in force is refused, as is rolling back to a document that is already in force under a later number.
   */
  rollBack(to: { version: number; document: PolicyDocument }, by: Actor, at: Date, reason?: string): void {
    if (to.version === this.s.version || (this.s.version > 0 && this.s.document.equals(to.document)))
      throw new PolicyVersionInForceError(to.version, this.s.version);
    const previousVersion = this.s.version;
    this.s = { ...this.s, version: previousVersion + 1, document: to.document, updatedAt: at, updatedBy: by.id };
    this.record(
      new PolicyUpdated(
        { tenantId: this.tenantId, at, actor: by },
        {
          version: this.s.version,
          previousVersion,
          document: to.document.toJSON(),
          source: 'rollback',
          rolledBackFrom: to.version,
          ...(reason ? { reason } : {}),
        },
      ),
    );
  }
}
