import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { loadConfig } from '../../src/infrastructure/config/config';
import { RunningServer, startServer } from '../../src/server';
import { client } from '../support/http';
import { startTestServer, TEST_SECRET } from '../support/server';
import { mintToken } from '../../src/infrastructure/auth/jwt-verifier';

/** Besides the triggers, UPDATE, DELETE and TRUNCATE on events are revoked, the owning role's own included. */
describe('privileges on the events table', () => {
  it('are revoked from the role that ran the migrations, which owns the table', async () => {
    const server = await startTestServer();
    try {
      const rows: Array<{ privilege_type: string }> = await server.dataSource.query(
        `SELECT a.privilege_type FROM pg_class c, aclexplode(c.relacl) a
          WHERE c.relname = 'events' AND c.relnamespace = to_regnamespace(current_schema()) AND a.grantee = c.relowner`,
      );
      const held = rows.map((r) => r.privilege_type);
      expect(held).toEqual(expect.arrayContaining(['INSERT', 'SELECT']));
      for (const p of ['UPDATE', 'DELETE', 'TRUNCATE']) expect(held).not.toContain(p);
    } finally {
      await server.stop();
    }
  });

  // A role that owns the table but is not a superuser (as a service usually runs) is stopped by the
  // privileges before any trigger: PostgreSQL only, PGlite has a single superuser.
  const onPostgres = process.env.DATABASE_URL ? it : it.skip;
  onPostgres(
    'make UPDATE, DELETE and TRUNCATE fail with "permission denied" for an owning, non-superuser service role',
    async () => {
      const admin = new Client({ connectionString: process.env.DATABASE_URL });
      await admin.connect();
      const suffix = randomBytes(5).toString('hex');
      const role = `tollgate_app_${suffix}`;
      const db = `tollgate_priv_${suffix}`;
      let server: RunningServer | undefined;
      try {
        await admin.query(`CREATE ROLE ${role} LOGIN NOSUPERUSER`);
        await admin.query(`CREATE DATABASE ${db} OWNER ${role}`);
        const url = new URL(process.env.DATABASE_URL!);
        url.username = role;
        url.password = '';
        url.pathname = `/${db}`;
        server = await startServer(
          {
            ...loadConfig({}),
            host: '127.0.0.1',
            port: 0,
            grpcPort: 0,
            databaseUrl: url.toString(),
            auth: { secret: TEST_SECRET, devSecret: false },
            sweepIntervalMs: 0,
          },
          { logLevels: false },
        );
        const agent = await mintToken(TEST_SECRET, { sub: 'bot', roles: ['agent'] });
        expect((await client(server.url).post('/v1/conversations', agent, { id: 'c1' })).status).toBe(201);
        for (const sql of [`UPDATE events SET type = 'x'`, `DELETE FROM events`, `TRUNCATE events`]) {
          await expect(server.dataSource.query(sql)).rejects.toThrow(/permission denied/);
        }
        const [{ n }] = await server.dataSource.query(`SELECT count(*)::int AS n FROM events`);
        expect(n).toBe(1);
      } finally {
        await server?.close();
        await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
        await admin.query(`DROP ROLE IF EXISTS ${role}`);
        await admin.end();
      }
    },
    60_000,
  );
});
