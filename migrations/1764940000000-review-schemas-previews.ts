import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Schema-driven review and previews (docs/API.md): a tool's JSON Schema for its input, used to render forms and
 * check edits, and a proposal's preview (kind, content, digest), shown to people and bound to the receipt.
 */
export class ReviewSchemasPreviews1764940000000 implements MigrationInterface {
  name = 'ReviewSchemasPreviews1764940000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tools ADD COLUMN input_schema jsonb`);
    await q.query(`ALTER TABLE tool_calls ADD COLUMN preview jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tool_calls DROP COLUMN preview`);
    await q.query(`ALTER TABLE tools DROP COLUMN input_schema`);
  }
}
