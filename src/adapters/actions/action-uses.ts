import { Injectable } from '@nestjs/common';
import { returnedRows } from '../../infrastructure/persistence/returned-rows';
import { TypeOrmUnitOfWork } from '../../infrastructure/persistence/unit-of-work';
import type { OpenedAction } from './action-tokens';

/**
 * The action tokens used so far (table `action_token_uses`): spending one is a single insert, so of two uses at
 * once exactly one wins. Rows outlive the token's expiry only until the next sweep; after it the signature's
 * expiry alone refuses a replay.
 */
@Injectable()
export class ActionUses {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  /** True when this use is the token's first. */
  async spend(a: OpenedAction, at: Date): Promise<boolean> {
    const rows: unknown[] = await this.uow.manager().query(
      `INSERT INTO action_token_uses (tenant_id, jti, tool_call_id, person_id, used_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant_id, jti) DO NOTHING RETURNING jti`,
      [a.tenant, a.jti, a.toolCallId, a.person, at, a.expiresAt],
    );
    return rows.length === 1;
  }

  /** True when the token was used already. */
  async spent(a: OpenedAction): Promise<boolean> {
    const rows: unknown[] = await this.uow
      .manager()
      .query(`SELECT 1 FROM action_token_uses WHERE tenant_id = $1 AND jti = $2`, [a.tenant, a.jti]);
    return rows.length > 0;
  }

  /** Gives a token back after its decision failed for a reason a retry may cure (the database was away). */
  async unspend(a: OpenedAction): Promise<void> {
    await this.uow
      .manager()
      .query(`DELETE FROM action_token_uses WHERE tenant_id = $1 AND jti = $2`, [a.tenant, a.jti]);
  }

  /** Forgets uses of tokens that expired before `before`: their signature refuses them by now. */
  async sweep(before: Date): Promise<number> {
    const result: unknown = await this.uow
      .manager()
      .query(`DELETE FROM action_token_uses WHERE expires_at < $1 RETURNING jti`, [before]);
    return returnedRows(result).length;
  }
}
