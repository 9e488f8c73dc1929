/* One class per transition of a grant; names are past tense. */
import { BaseEvent } from '../shared/event-base';
import type { GrantScope } from '../policy/grant-limit';

export class GrantCreated extends BaseEvent<{
  grantId: string;
  scope: GrantScope;
  scopeId: string | null;
  createdBy: string;
  via: string;
  args?: Record<string, string>;
  expiresAt?: string;
}> {
  readonly type = 'GrantCreated' as const;
}

export class GrantRevoked extends BaseEvent<{
  grantId: string;
  scope: GrantScope;
  scopeId: string | null;
  revokedBy: string;
  via: string;
  reason?: string;
}> {
  readonly type = 'GrantRevoked' as const;
}
