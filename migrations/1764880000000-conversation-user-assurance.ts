import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How Tollgate knows a conversation's end user: `verified` from the user's own identity provider token
 * (`user.token` when the conversation started), or `asserted` when the agent named them. Every user recorded before
 * was the agent's word. Null where there is no user; a row an older instance writes during an upgrade leaves it null
 * too, and a null is read as `asserted` (only `verified` counts as verified).
 */
export class ConversationUserAssurance1764880000000 implements MigrationInterface {
  name = 'ConversationUserAssurance1764880000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE conversations ADD COLUMN user_assurance text
         CONSTRAINT conversations_user_assurance CHECK (user_assurance IN ('verified', 'asserted'))`,
    );
    await q.query(`UPDATE conversations SET user_assurance = 'asserted' WHERE user_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE conversations DROP COLUMN user_assurance`);
  }
}
