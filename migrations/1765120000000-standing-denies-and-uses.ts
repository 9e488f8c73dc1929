import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Standing denies and single-use grants (issue 28 part 4): a grant row is an allow (`effect = 'allow'`, what it was
 * before) or a standing deny (`'deny'`, made by an always_reject or created directly); `uses` bounds how many calls an
 * allow lets through (null: any number) and `uses_left` counts down, one atomic UPDATE per call let through.
 */
export class StandingDeniesAndUses1765120000000 implements MigrationInterface {
  name = 'StandingDeniesAndUses1765120000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE grants ADD COLUMN effect text NOT NULL DEFAULT 'allow'`);
    await q.query(`ALTER TABLE grants ADD CONSTRAINT grants_effect CHECK (effect IN ('allow', 'deny'))`);
    await q.query(`ALTER TABLE grants ADD COLUMN uses integer`);
    await q.query(`ALTER TABLE grants ADD COLUMN uses_left integer`);
    await q.query(
      `ALTER TABLE grants ADD CONSTRAINT grants_uses CHECK ((uses IS NULL AND uses_left IS NULL) OR (uses BETWEEN 1 AND 1000 AND uses_left BETWEEN 0 AND uses))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE grants DROP CONSTRAINT grants_uses`);
    await q.query(`ALTER TABLE grants DROP COLUMN uses_left`);
    await q.query(`ALTER TABLE grants DROP COLUMN uses`);
    await q.query(`ALTER TABLE grants DROP CONSTRAINT grants_effect`);
    await q.query(`ALTER TABLE grants DROP COLUMN effect`);
  }
}
