/**
 * A lost device: an admin removes another person's passkey without an assertion, and the person registers a new
 * one with their sign-in alone. Admins never remove their own this way (a stolen admin session must not swap the
 * admin's passkeys for the thief's), never another tenant's, and nobody else may do it at all.
 */
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { SoftAuthenticator } from '../support/soft-authenticator';

let server: TestServer;
let http: ReturnType<typeof client>;
let origin: string;
let root: string;
let otherAdmin: string;
let ann: string;
let bob: string;
let agent: string;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
  origin = `http://localhost:${new URL(server.url).port}`;
  root = await server.token('root', ['admin'], { name: 'Root' });
  otherAdmin = await server.token('olga', ['admin'], { tenant: 'other' });
  ann = await server.token('ann', ['approver'], { name: 'Ann' });
  bob = await server.token('bob', ['approver']);
  agent = await server.token('bot', ['agent']);
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

async function register(token: string, key: SoftAuthenticator): Promise<string> {
  const options = await http.post('/v1/me/passkeys/options', token);
  expect(options.status).toBe(200);
  const assertion = options.body.assertion ? key.assert(options.body.assertion.publicKey) : undefined;
  const res = await http.post('/v1/me/passkeys', token, {
    response: key.register(options.body.publicKey),
    ...(assertion ? { assertion } : {}),
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

describe('recovering from a lost passkey', () => {
  it('an admin lists and removes it, it is recorded, and the person registers anew with their sign-in alone', async () => {
    const lost = new SoftAuthenticator(origin);
    const id = await register(ann, lost);

    const listed = await http.get('/v1/people/ann/passkeys', root);
    expect(listed.status).toBe(200);
    expect(listed.body.passkeys.map((k: { id: string }) => k.id)).toEqual([id]);
    expect(JSON.stringify(listed.body)).not.toMatch(/publicKey/);

    // Without the lost device, Ann cannot add another passkey on her own…
    const blocked = await http.post('/v1/me/passkeys/options', ann);
    expect(blocked.body.assertion).toBeDefined();
    const attempt = await http.post('/v1/me/passkeys', ann, {
      response: new SoftAuthenticator(origin).register(blocked.body.publicKey),
    });
    expect(attempt.status).toBe(403);
    expect(attempt.body.code).toBe('step_up_required');

    // …so an admin removes the lost one.
    expect((await http.call('DELETE', `/v1/people/ann/passkeys/${id}`, { token: root })).status).toBe(204);
    expect((await http.get('/v1/me/passkeys', ann)).body.passkeys).toEqual([]);
    const events = (await http.get('/v1/audit/events?type=PasskeyRemoved&limit=100', root)).body.events;
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          data: expect.objectContaining({ personId: 'ann', credentialId: id, removedBy: 'root' }),
          actor: expect.objectContaining({ id: 'root', kind: 'person' }),
        }),
      ]),
    );

    const fresh = new SoftAuthenticator(origin);
    const options = await http.post('/v1/me/passkeys/options', ann);
    expect(options.body.assertion).toBeUndefined();
    const again = await http.post('/v1/me/passkeys', ann, { response: fresh.register(options.body.publicKey) });
    expect(again.status).toBe(201);
  });

  it('refuses an admin their own passkeys, non-admins, agents and other tenants; an unknown one is 404', async () => {
    const rootKey = new SoftAuthenticator(origin);
    const rootId = await register(root, rootKey);
    const own = await http.call('DELETE', `/v1/people/root/passkeys/${rootId}`, { token: root });
    expect(own.status).toBe(403);
    expect(own.body.detail).toMatch(/\/v1\/me\/passkeys/);

    const bobKey = new SoftAuthenticator(origin);
    const bobId = await register(bob, bobKey);
    for (const token of [ann, agent]) {
      expect((await http.get('/v1/people/bob/passkeys', token)).status).toBe(403);
      expect((await http.call('DELETE', `/v1/people/bob/passkeys/${bobId}`, { token: token })).status).toBe(403);
    }
    // Another tenant's admin finds no such person here, and removes nothing.
    expect((await http.get('/v1/people/bob/passkeys', otherAdmin)).body.passkeys).toEqual([]);
    expect((await http.call('DELETE', `/v1/people/bob/passkeys/${bobId}`, { token: otherAdmin })).status).toBe(404);
    expect((await http.call('DELETE', `/v1/people/bob/passkeys/not-a-passkey`, { token: root })).status).toBe(404);
    expect(
      (await http.call('DELETE', `/v1/people/bob/passkeys/${encodeURIComponent('../x')}`, { token: root })).status,
    ).toBe(404);
    expect((await http.get('/v1/me/passkeys', bob)).body.passkeys).toHaveLength(1);
    expect((await http.get('/v1/me/passkeys', root)).body.passkeys).toHaveLength(1);
  });
});
