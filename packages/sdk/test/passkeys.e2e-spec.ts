/**
 * Passkeys through the SDK, against the real server: a person registers, lists and removes their passkeys
 * (`tollgate.passkeys`), and approves a call whose rule says `stepUp: passkey` with `inbox.stepUp` and the decision's
 * `stepUp`. A software authenticator stands in for the browser's WebAuthn.
 */
import { argumentsDigest, needsPasskey, Tollgate, TollgateError, type AuditEvent } from '@tollgate/sdk';
import {
  PASSKEY_POLICY,
  registerPasskey,
  setUp,
  SoftAuthenticator,
  startTestServer,
  type Setup,
  type TestServer,
} from './support.js';

let server: TestServer;
let s: Setup;
let ann: Tollgate;
let annKey: SoftAuthenticator;
const wire = { to: 'ACME', amount: 950000 };

beforeAll(async () => {
  server = await startTestServer();
  s = await setUp(server);
  await s.ann.putPolicy(PASSKEY_POLICY);
  ann = new Tollgate({ url: server.url, token: s.annToken, channel: 'web' });
  annKey = await registerPasskey(server, ann);
});

afterAll(async () => {
  await server?.stop();
});

let n = 0;
async function held(toolName = 'wire_money', args: Record<string, unknown> = wire) {
  const conv = await s.agent().conversation({ id: `sdk-pk-${++n}`, user: { id: 'zed', roles: ['user'] } });
  const [handle] = await conv.proposeStep([{ toolName, arguments: args }]);
  return handle.id;
}

async function refusal(p: Promise<unknown>): Promise<{ status: number; code: string }> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(TollgateError);
  return { status: (e as TollgateError).status, code: (e as TollgateError).code };
}

async function events(type: string): Promise<AuditEvent[]> {
  return (await s.ann.listAuditEvents({ type, limit: 1000 })).events;
}

describe('tollgate.passkeys', () => {
  it('registers a first passkey with the sign-in alone, a second only with an assertion, and removes one with one', async () => {
    const pat = new Tollgate({
      url: server.url,
      token: await server.token('pat', ['approver'], { name: 'Pat' }),
      channel: 'web',
    });
    const key = new SoftAuthenticator(`http://localhost:${new URL(server.url).port}`);
    expect(await pat.passkeys.list()).toEqual([]);

    const first = await pat.passkeys.registrationOptions();
    expect(first.assertion).toBeUndefined();
    const made = await pat.passkeys.register({ response: key.register(first.publicKey), name: 'Laptop' });
    expect(made).toEqual({
      id: key.ids[0],
      name: 'Laptop',
      aaguid: key.aaguid,
      backedUp: false,
      createdAt: expect.any(String),
    });

    const second = await pat.passkeys.registrationOptions();
    expect(second.assertion?.publicKey).toBeDefined();
    const phone = new SoftAuthenticator(key.origin);
    expect(await refusal(pat.passkeys.register({ response: phone.register(second.publicKey) }))).toEqual({
      status: 403,
      code: 'step_up_required',
    });
    const again = await pat.passkeys.registrationOptions();
    await pat.passkeys.register({
      response: phone.register(again.publicKey),
      assertion: key.assert(again.assertion!.publicKey),
      name: 'Phone',
    });
    expect((await pat.passkeys.list()).map((p) => p.name)).toEqual(['Laptop', 'Phone']);

    // An assertion answers for the one change it was asked for: one made for an admin's revoke removes nothing.
    const forRevoke = await pat.passkeys.assertionOptions({ purpose: 'revoke' });
    expect(await refusal(pat.passkeys.remove(key.ids[0], phone.assert(forRevoke.publicKey)))).toEqual({
      status: 403,
      code: 'step_up_required',
    });
    const options = await pat.passkeys.assertionOptions();
    const phoneId = phone.ids.at(-1)!; // its first was refused above
    expect(await pat.passkeys.remove(key.ids[0], phone.assert(options.publicKey))).toBe(undefined);
    expect((await pat.passkeys.list()).map((p) => p.id)).toEqual([phoneId]);
    // An assertion with the passkey just removed proves nothing any more.
    const stale = await pat.passkeys.assertionOptions();
    const withRemoved = key.assert({ ...stale.publicKey, allowCredentials: [] });
    expect(await refusal(pat.passkeys.remove(phoneId, withRemoved))).toEqual({ status: 403, code: 'step_up_required' });

    // The client's channel is what the audit trail records the person acted through.
    const registered = (await events('PasskeyRegistered')).filter((e) => e.actor.id === 'pat');
    const removed = (await events('PasskeyRemoved')).filter((e) => e.actor.id === 'pat');
    expect(registered.map((e) => e.actor.via)).toEqual(['web', 'web']);
    expect(removed.map((e) => e.actor.via)).toEqual(['web']);
  });

  it('is for people: an agent token is refused', async () => {
    expect(await refusal(s.agent().passkeys.list())).toEqual({ status: 403, code: 'forbidden' });
  });
});

describe('approving a call whose rule asks for a passkey', () => {
  it('needsPasskey says which calls, and an approval without an assertion is refused', async () => {
    const id = await held();
    const plain = await held('send_email', { to: 'a@example.com' });
    const pending = await ann.inbox().all();
    expect(needsPasskey(pending.find((a) => a.id === id)!)).toBe(true);
    expect(needsPasskey(pending.find((a) => a.id === plain)!)).toBe(false);
    expect(await refusal(ann.inbox().approve(id))).toEqual({ status: 403, code: 'step_up_required' });
    // A rejection needs none.
    expect((await ann.inbox().reject(id, { reason: 'not today' })).status).toBe('rejected');
  });

  it('approves with the assertion answering stepUp’s challenge; the decision shows the passkey', async () => {
    const id = await held();
    const options = await ann.inbox().stepUp(id);
    expect(options).toMatchObject({ toolCallId: id, argumentsDigest: await argumentsDigest(wire) });
    const call = await ann.inbox().approve(id, { stepUp: { passkey: annKey.assert(options.publicKey) } });
    expect(call.status).toBe('approved');
    expect(call.decision).toMatchObject({
      outcome: 'approved',
      by: { id: 'ann', via: 'web' },
      stepUp: { method: 'passkey', credentialId: annKey.ids[0], aaguid: annKey.aaguid, userVerified: true },
    });
  });

  it('binds the challenge to the arguments approved: edited ones need a challenge for them', async () => {
    const id = await held();
    const edited = { to: 'ACME', amount: 1000 };
    const forOwn = await ann.inbox().stepUp(id);
    expect(
      await refusal(
        ann.inbox().approve(id, { arguments: edited, stepUp: { passkey: annKey.assert(forOwn.publicKey) } }),
      ),
    ).toEqual({ status: 403, code: 'step_up_mismatch' });

    const forEdited = await ann.inbox().stepUp(id, { arguments: edited });
    expect(forEdited.argumentsDigest).toBe(await argumentsDigest(edited));
    const call = await ann.inbox().approve(id, {
      arguments: edited,
      stepUp: { passkey: annKey.assert(forEdited.publicKey) },
    });
    expect(call).toMatchObject({ status: 'approved', decision: { editedArguments: edited } });
  });

  it('stepUp refuses a call that asks no passkey, a person without one, and a call already decided', async () => {
    const plain = await held('send_email', { to: 'b@example.com' });
    expect(await refusal(ann.inbox().stepUp(plain))).toEqual({ status: 409, code: 'step_up_not_required' });

    const id = await held();
    const quinn = new Tollgate({ url: server.url, token: await server.token('quinn', ['approver']) });
    expect(await refusal(quinn.inbox().stepUp(id))).toEqual({ status: 409, code: 'no_passkey' });

    await ann.inbox().reject(id);
    expect(await refusal(ann.inbox().stepUp(id))).toEqual({ status: 409, code: 'already_decided' });
  });
});
