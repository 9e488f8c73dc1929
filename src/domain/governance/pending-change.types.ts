/** The control-plane actions a tenant's `governance` holds for more admins. */
export const CHANGE_KINDS = ['policy_update', 'policy_rollback', 'resume', 'webhook_create', 'tenant_grant'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];
export const CHANGE_STATUSES = ['pending', 'applied', 'rejected', 'expired'] as const;
export type ChangeStatus = (typeof CHANGE_STATUSES)[number];

/** A person as a change records them. */
export interface PersonRef {
  id: string;
  name?: string;
}
