import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Secret redaction (docs/SECURITY.md "The data key"): a tool names its secret arguments (`tools.redact`), and a
 * call whose arguments held any keeps their real values sealed with the data key (AES-256-GCM, a key id in the
 * value) in `tool_calls.sealed_arguments`, for the claim only; every other column and every event holds them masked.
 */
export class SecretRedaction1765110000000 implements MigrationInterface {
  name = 'SecretRedaction1765110000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tools ADD COLUMN redact text[]`);
    await q.query(`ALTER TABLE tool_calls ADD COLUMN sealed_arguments text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tool_calls DROP COLUMN sealed_arguments`);
    await q.query(`ALTER TABLE tools DROP COLUMN redact`);
  }
}
