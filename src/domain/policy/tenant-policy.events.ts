/* One class per transition of a tenant's policy; names are past tense. */
import { BaseEvent } from '../shared/event-base';
import type { PolicyDocumentJson } from './policy-document';

/** `rolledBackFrom` (and the admin's `reason`) only on a rollback: the version whose document this one repeats. */
export class PolicyUpdated extends BaseEvent<{
  version: number;
  previousVersion: number;
  document: PolicyDocumentJson;
  source: string;
  rolledBackFrom?: number;
  reason?: string;
}> {
  readonly type = 'PolicyUpdated' as const;
}
