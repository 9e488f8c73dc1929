import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A passkey assertion authorises one kind of change: adding a passkey, removing one's own, or an admin's removal of
 * another person's (a lost device). One `manage` purpose served all three, so a touch captured for a removal could
 * add a thief's passkey; each now has its own. Outstanding `manage` challenges (minutes old at most) are dropped.
 */
export class PasskeyChallengePurposes1764890000000 implements MigrationInterface {
  name = 'PasskeyChallengePurposes1764890000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM passkey_challenges WHERE purpose = 'manage'`);
    await q.query(`ALTER TABLE passkey_challenges DROP CONSTRAINT passkey_challenges_purpose_check`);
    await q.query(
      `ALTER TABLE passkey_challenges ADD CONSTRAINT passkey_challenges_purpose_check
         CHECK (purpose IN ('register','step_up','add','remove','revoke'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM passkey_challenges WHERE purpose IN ('add','remove','revoke')`);
    await q.query(`ALTER TABLE passkey_challenges DROP CONSTRAINT passkey_challenges_purpose_check`);
    await q.query(
      `ALTER TABLE passkey_challenges ADD CONSTRAINT passkey_challenges_purpose_check
         CHECK (purpose IN ('register','step_up','manage'))`,
    );
  }
}
