/**
 * The key that signs execution receipts and audit checkpoints may come from TOLLGATE_SIGNING_KEY_FILE or
 * TOLLGATE_SIGNING_KEY (PKCS#8 PEM or a private JWK) instead of the database (issue 11, finding 15). Then it
 * is used, never written to the database, and JWKS publishes it; a key that is not Ed25519 stops the start.
 */
import { calculateJwkThumbprint, compactVerify, createLocalJWKSet, jwtVerify } from 'jose';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/infrastructure/config/config';
import { freshDatabase, TestDatabase } from '../support/database';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'tollgate-signing-key-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const ed25519 = () => generateKeyPairSync('ed25519');
const pemFile = (name: string, pem: string) => {
  const path = join(scratch, name);
  writeFileSync(path, pem, { mode: 0o600 });
  return path;
};

/** A receipt (propose → approve → claim) and a checkpoint, from `server`, in a tenant of their own. */
async function signSomething(server: TestServer, tenant: string): Promise<{ receipt: string; checkpoint: string }> {
  const http = client(server.url);
  const agent = await server.token('bot', ['agent'], { tenant });
  const approver = await server.token('alice', ['approver'], { tenant });
  expect((await http.post('/v1/conversations', agent, { id: 'c1' })).status).toBe(201);
  const step = await http.post('/v1/conversations/c1/tool-calls', agent, {
    toolCalls: [{ toolName: 'send_x', arguments: { to: 'bob' } }],
  });
  const id = step.body.toolCalls[0].id;
  expect((await http.post(`/v1/tool-calls/${id}/decision`, approver, { decision: 'approve' })).status).toBe(200);
  const claim = await http.post(`/v1/tool-calls/${id}/execution`, agent);
  expect(claim.status).toBe(200);
  const cp = await http.get('/v1/audit/checkpoint', await server.token('audrey', ['auditor'], { tenant }), {
    accept: 'application/json',
  });
  expect(cp.status).toBe(200);
  return { receipt: claim.body.receipt, checkpoint: cp.body.jws };
}

const privateKeysInDatabase = async (server: TestServer) =>
  Number((await server.dataSource.query(`SELECT count(*) AS n FROM signing_keys`))[0].n);

describe('a signing key from a file', () => {
  let server: TestServer;
  const { privateKey, publicKey } = ed25519();

  beforeAll(async () => {
    server = await startTestServer({
      signingKeyFile: pemFile('key.pem', privateKey.export({ type: 'pkcs8', format: 'pem' }) as string),
    });
  });
  afterAll(() => server?.stop());

  it('signs receipts and checkpoints that verify against JWKS, which publishes that key alone', async () => {
    const { receipt, checkpoint } = await signSomething(server, 'file-key');
    const jwks = (await client(server.url).get('/.well-known/jwks.json')).body;
    const expected = publicKey.export({ format: 'jwk' });
    expect(jwks.keys).toEqual([
      { ...expected, kid: await calculateJwkThumbprint(expected as never), alg: 'EdDSA', use: 'sig' },
    ]);
    const keys = createLocalJWKSet(jwks);
    const r = await jwtVerify(receipt, keys, { issuer: 'tollgate', typ: 'tollgate-receipt+jwt' });
    expect(r.payload).toMatchObject({ tool: 'send_x', approvedBy: 'alice' });
    const c = await compactVerify(checkpoint, keys);
    expect(JSON.parse(new TextDecoder().decode(c.payload))).toMatchObject({
      tenant: 'file-key',
      seq: expect.any(Number),
    });
    const auditor = await server.token('audrey', ['auditor'], { tenant: 'file-key' });
    expect((await client(server.url).get(`/v1/audit/verify?checkpoint=${checkpoint}`, auditor)).body).toMatchObject({
      ok: true,
      checkpoint: { tenant: 'file-key' },
    });
  });

  it('never puts a private key in the database', async () => {
    expect(await privateKeysInDatabase(server)).toBe(0);
  });
});

describe('a signing key from the environment, as a private JWK', () => {
  it('signs with it, and the database holds no key', async () => {
    const { privateKey } = ed25519();
    const server = await startTestServer({ signingKey: JSON.stringify(privateKey.export({ format: 'jwk' })) });
    try {
      const { receipt } = await signSomething(server, 'env-key');
      const jwks = (await client(server.url).get('/.well-known/jwks.json')).body;
      await jwtVerify(receipt, createLocalJWKSet(jwks));
      expect(await privateKeysInDatabase(server)).toBe(0);
    } finally {
      await server.stop();
    }
  });
});

describe('a signing key that will not do', () => {
  const refused = async (overrides: { signingKey?: string; signingKeyFile?: string }, message: RegExp) => {
    const db = await freshDatabase();
    try {
      const start = startTestServer(overrides, { db });
      await expect(start).rejects.toBeInstanceOf(ConfigError);
      await expect(start).rejects.toThrow(message);
    } finally {
      await db.drop();
    }
  };

  it('refuses an RSA key at start with a ConfigError naming the setting', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    await refused(
      { signingKeyFile: pemFile('rsa.pem', rsa) },
      /TOLLGATE_SIGNING_KEY_FILE .* is not an Ed25519 key \(it is rsa\)/,
    );
  });

  it('refuses a P-256 JWK, a public key, a file that is not there, and both settings at once', async () => {
    const ec = JSON.stringify(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }));
    await refused({ signingKey: ec }, /TOLLGATE_SIGNING_KEY is not an Ed25519 key \(it is ec\)/);
    const pub = ed25519().publicKey.export({ type: 'spki', format: 'pem' }) as string;
    await refused({ signingKey: pub }, /TOLLGATE_SIGNING_KEY is not a private key/);
    await refused({ signingKeyFile: join(scratch, 'missing.pem') }, /cannot be read: ENOENT/);
    const pem = ed25519().privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    await refused(
      { signingKey: pem, signingKeyFile: pemFile('both.pem', pem) },
      /either TOLLGATE_SIGNING_KEY or TOLLGATE_SIGNING_KEY_FILE/,
    );
  });
});

describe('moving from the database key to a configured one', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(() => db.drop());

  it('stops publishing the database key, still verifies checkpoints it signed, and adds no key to the database', async () => {
    const before = await startTestServer({}, { db });
    let old: { checkpoint: string };
    let oldKid: string;
    try {
      old = await signSomething(before, 'moving');
      oldKid = (await client(before.url).get('/.well-known/jwks.json')).body.keys[0].kid;
      expect(await privateKeysInDatabase(before)).toBe(1);
    } finally {
      await before.close();
    }

    const after = await startTestServer(
      { signingKeyFile: pemFile('new.pem', ed25519().privateKey.export({ type: 'pkcs8', format: 'pem' }) as string) },
      { db },
    );
    try {
      const http = client(after.url);
      const jwks = (await http.get('/.well-known/jwks.json')).body;
      expect(jwks.keys.map((k: { kid: string }) => k.kid)).not.toContain(oldKid);
      expect(jwks.keys).toHaveLength(1);
      const auditor = await after.token('audrey', ['auditor'], { tenant: 'moving' });
      expect((await http.get(`/v1/audit/verify?checkpoint=${old.checkpoint}`, auditor)).body).toMatchObject({
        ok: true,
        checkpoint: { kid: oldKid },
      });
      expect(await privateKeysInDatabase(after)).toBe(1);
    } finally {
      await after.close();
    }
  });
});
