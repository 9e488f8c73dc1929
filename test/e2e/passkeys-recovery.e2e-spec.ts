/**
 * A lost device: an admin removes another person's passkey, signing the removal with the admin's own passkey, and
 * the person registers a new one with their sign-in alone. Admins never remove their own this way (a stolen admin
 * session must not swap the admin's passkeys for the thief's), never another tenant's, never with a session alone,
 * and nobody else may do it at all. Each assertion authorises the one change it was asked for.
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
let rootKey: SoftAuthenticator;
let olgaKey: SoftAuthenticator;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
  origin = `http://localhost:${new URL(server.url).port}`;
  root = await server.token('root', ['admin'], { name: 'Root' });
  otherAdmin = await server.token('olga', ['admin'], { tenant: 'other' });
  ann = await server.token('ann', ['approver'], { name: 'Ann' });
  bob = await server.token('bob', ['approver']);
  agent = await server.token('bot', ['agent']);
  rootKey = new SoftAuthenticator(origin);
  olgaKey = new SoftAuthenticator(origin);
  await register(root, rootKey);
  await register(otherAdmin, olgaKey);
}, 60_000);

/** An assertion with the admin's own passkey, made for an admin's removal of someone else's. */
async function revokeAssertion(token: string, key: SoftAuthenticator) {
  const options = await http.post('/v1/me/passkeys/assertion-options', token, { purpose: 'revoke' });
  expect(options.status).toBe(200);
  return key.assert(options.body.publicKey);
}

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

    // …so an admin removes the lost one: not with the admin's session alone, nor with an assertion made for
    // another change, but with one made for this.
    const bare = await http.call('DELETE', `/v1/people/ann/passkeys/${id}`, { token: root, body: {} });
    expect(bare.status).toBe(400);
    const forRemove = await http.post('/v1/me/passkeys/assertion-options', root);
    const wrongPurpose = await http.call('DELETE', `/v1/people/ann/passkeys/${id}`, {
      token: root,
      body: { assertion: rootKey.assert(forRemove.body.publicKey) },
    });
    expect(wrongPurpose.status).toBe(403);
    expect(wrongPurpose.body.code).toBe('step_up_required');
    const revoked = await http.call('DELETE', `/v1/people/ann/passkeys/${id}`, {
      token: root,
      body: { assertion: await revokeAssertion(root, rootKey) },
    });
    expect(revoked.status).toBe(204);
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
    const rootId = rootKey.ids[0];
    const own = await http.call('DELETE', `/v1/people/root/passkeys/${rootId}`, {
      token: root,
      body: { assertion: await revokeAssertion(root, rootKey) },
    });
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
    const otherTenant = await http.call('DELETE', `/v1/people/bob/passkeys/${bobId}`, {
      token: otherAdmin,
      body: { assertion: await revokeAssertion(otherAdmin, olgaKey) },
    });
    expect(otherTenant.status).toBe(404);
    expect(
      (
        await http.call('DELETE', `/v1/people/bob/passkeys/not-a-passkey`, {
          token: root,
          body: { assertion: await revokeAssertion(root, rootKey) },
        })
      ).status,
    ).toBe(404);
    expect(
      (await http.call('DELETE', `/v1/people/bob/passkeys/${encodeURIComponent('../x')}`, { token: root })).status,
    ).toBe(404);
    expect((await http.get('/v1/me/passkeys', bob)).body.passkeys).toHaveLength(1);
    expect((await http.get('/v1/me/passkeys', root)).body.passkeys).toHaveLength(1);
  });

  it('an assertion made to remove a passkey never adds one (a touch captured for one change serves no other)', async () => {
    const carlKey = new SoftAuthenticator(origin);
    const carl = await server.token('carl', ['approver']);
    await register(carl, carlKey);
    const removal = await http.post('/v1/me/passkeys/assertion-options', carl);
    const captured = carlKey.assert(removal.body.publicKey);
    const options = await http.post('/v1/me/passkeys/options', carl);
    const added = await http.post('/v1/me/passkeys', carl, {
      response: new SoftAuthenticator(origin).register(options.body.publicKey),
      assertion: captured,
    });
    expect(added.status).toBe(403);
    expect(added.body.code).toBe('step_up_required');
    expect((await http.get('/v1/me/passkeys', carl)).body.passkeys).toHaveLength(1);
    expect((await http.post('/v1/me/passkeys/assertion-options', carl, { purpose: 'add' })).status).toBe(400);
  });
});
