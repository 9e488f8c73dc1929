import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Passkeys (WebAuthn credentials) people register in the web inbox, for the approvals whose rule says
 * `stepUp: passkey`, and the challenges Tollgate issued for them. Only the public key is stored: a copy of this
 * table signs nothing. A challenge is used once (deleted as it is checked) and lives a few minutes; a step-up's is
 * derived from the call id and the digest of the arguments approved, so it answers for that call only.
 */
export class Passkeys1764870000000 implements MigrationInterface {
  name = 'Passkeys1764870000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE passkeys (
        tenant_id     text        NOT NULL,
        credential_id text        NOT NULL,
        person_id     text        NOT NULL,
        public_key    text        NOT NULL,
        counter       bigint      NOT NULL DEFAULT 0,
        aaguid        text        NOT NULL,
        transports    text[]      NOT NULL DEFAULT '{}',
        device_type   text        NOT NULL,
        backed_up     boolean     NOT NULL,
        name          text        NOT NULL,
        created_at    timestamptz NOT NULL,
        last_used_at  timestamptz,
        PRIMARY KEY (tenant_id, credential_id),
        FOREIGN KEY (tenant_id, person_id) REFERENCES persons (tenant_id, id)
      )`);
    await q.query(`CREATE INDEX passkeys_by_person ON passkeys (tenant_id, person_id)`);
    await q.query(`
      CREATE TABLE passkey_challenges (
        tenant_id        text        NOT NULL,
        challenge        text        NOT NULL,
        person_id        text        NOT NULL,
        purpose          text        NOT NULL CHECK (purpose IN ('register','step_up','manage')),
        nonce            text        NOT NULL,
        tool_call_id     text,
        arguments_digest text,
        expires_at       timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, challenge)
      )`);
    await q.query(`CREATE INDEX passkey_challenges_by_person ON passkey_challenges (tenant_id, person_id, expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE passkey_challenges`);
    await q.query(`DROP TABLE passkeys`);
  }
}
