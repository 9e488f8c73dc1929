import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Standing grants get a lifecycle: a lifetime (`expires_at`), revocation (`revoked_at`, `revoked_by`,
 * `revoke_reason`) and an argument pattern (`args`: argument name → glob). Grants made before stay as they were:
 * no lifetime, not revoked, any arguments.
 *
 * `grants_by_created` serves GET /v1/grants (newest first, keyset on (created_at, id)), led by tenant_id as
 * every index is. The proposal hot path keeps using `grants_by_tool` (tenant_id, tool_name); its few rows per
 * tool are filtered on revoked_at and expires_at after the index lookup.
 */
export class GrantLifecycle1764810000000 implements MigrationInterface {
  name = 'GrantLifecycle1764810000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE grants
        ADD COLUMN expires_at    timestamptz,
        ADD COLUMN revoked_at    timestamptz,
        ADD COLUMN revoked_by    jsonb,
        ADD COLUMN revoke_reason text,
        ADD COLUMN args          jsonb`);
    await q.query(`CREATE INDEX grants_by_created ON grants (tenant_id, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX grants_by_created`);
    await q.query(
      `ALTER TABLE grants DROP COLUMN expires_at, DROP COLUMN revoked_at, DROP COLUMN revoked_by, DROP COLUMN revoke_reason, DROP COLUMN args`,
    );
  }
}
