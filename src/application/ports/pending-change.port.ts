import type { ChangeStatus, PendingChange } from '../../domain/governance/pending-change.aggregate';
import type { ListFilter } from './index';

export const PENDING_CHANGES = Symbol('PendingChangeRepository');

/** The control plane's pending changes (four eyes), always by tenant. */
export interface PendingChangeRepository {
  /** Locked (FOR UPDATE) inside a unit of work with `lock`: two approvals at once take turns, and one applies. */
  find(tenantId: string, id: string, opts?: { lock?: boolean }): Promise<PendingChange | null>;
  /** Inserts a new change (with a new webhook's signing secret beside it), or updates one where its version still holds. */
  save(change: PendingChange, secret?: string): Promise<void>;
  /** A new webhook's signing secret, until its change ends. */
  secretOf(tenantId: string, id: string): Promise<string | null>;
  /** Newest first; `status` filters (`pending` includes none past their deadline). */
  list(
    tenantId: string,
    filter: ListFilter & { status?: ChangeStatus },
    now: Date,
  ): Promise<{ items: PendingChange[]; nextCursor: string | null }>;
  /** Pending changes past their deadline, up to `limit`, for the sweeper. */
  due(now: Date, limit: number): Promise<Array<{ tenantId: string; id: string }>>;
}
