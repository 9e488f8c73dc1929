/**
 * The VAPID key pair is made once and shared: instances racing to make the first one all end with the oldest (as the
 * signing key does), a restart keeps it (a new one would orphan every browser's subscription), and a pair the
 * operator configures is used without touching the database.
 */
import { generateVAPIDKeys } from 'web-push';
import { VapidKeys } from '../../src/adapters/push/vapid-keys';
import { ConfigError } from '../../src/infrastructure/config/config';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ push: { subject: 'mailto:ops@example.com' } });
});

afterAll(() => server?.stop());

const rows = async () => (await server.dataSource.query(`SELECT public_key FROM vapid_keys`)) as unknown[];

describe('VAPID keys kept in the database', () => {
  it('are made once: instances racing for the first all use the oldest, and the API serves it', async () => {
    expect(await rows()).toEqual([]);
    const instances = Array.from({ length: 4 }, () => new VapidKeys(server.dataSource, server.config));
    const pairs = await Promise.all(instances.map((k) => k.get()));
    expect(new Set(pairs.map((p) => p.publicKey)).size).toBe(1);
    expect(new Set(pairs.map((p) => p.privateKey)).size).toBe(1);
    const [oldest] = await server.dataSource.query(`SELECT public_key FROM vapid_keys ORDER BY created_at, id LIMIT 1`);
    expect(pairs[0].publicKey).toBe(oldest.public_key);
    const ann = await server.token('ann', ['approver']);
    expect((await client(server.url).get('/v1/push/vapid-public-key', ann)).body).toEqual({
      publicKey: pairs[0].publicKey,
    });
    // A later instance (a restart) finds the same pair.
    expect(await new VapidKeys(server.dataSource, server.config).get()).toEqual(pairs[0]);
  });

  it("are the operator's when configured, and then the database is not written", async () => {
    const before = (await rows()).length;
    const pair = generateVAPIDKeys();
    const keys = new VapidKeys(server.dataSource, {
      ...server.config,
      push: { subject: 'mailto:o@example.com', ...pair },
    });
    expect(await keys.get()).toEqual(pair);
    expect((await rows()).length).toBe(before);
    expect(
      () =>
        new VapidKeys(server.dataSource, {
          ...server.config,
          push: { ...pair, privateKey: generateVAPIDKeys().privateKey },
        }),
    ).toThrow(ConfigError);
  });
});
