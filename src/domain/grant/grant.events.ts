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
  /** `deny`: a standing deny (absent: an allow). */
  effect?: 'deny';
  /** The calls a limited allow may let through. */
  uses?: number;
}> {
  readonly type = 'GrantCreated' as const;
}

/** A limited grant (`uses`) let one call through: `usesLeft` remain after it. */
export class GrantUsed extends BaseEvent<{
  grantId: string;
  uses: number;
  usesLeft: number;
}> {
  readonly type = 'GrantUsed' as const;
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
