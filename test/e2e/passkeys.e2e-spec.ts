/**
 * Passkeys (WebAuthn) and the approvals whose rule says `stepUp: passkey`, against the real server: people
 * register passkeys (a second one needs an assertion with the first), ask for a challenge derived from a call and
 * the arguments they approve, and approve with the assertion. The proof lands on the decision, in the audit trail
 * and in the receipt. Everything that proves nothing (no assertion, a used challenge, no user verification, another
 * person's passkey, another origin, another tenant) is step_up_required; a challenge for another call or other
 * arguments is step_up_mismatch. A software authenticator stands in for the browser's.
 */
import { isoCBOR } from '@simplewebauthn/server/helpers';
import canonicalize from 'canonicalize';
import { decodeJwt } from 'jose';
import { createHash, createPublicKey, verify } from 'node:crypto';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { SoftAuthenticator } from '../support/soft-authenticator';

type Json = any;

let server: TestServer;
let http: ReturnType<typeof client>;
let origin: string;
let root: string;
let agent: string;
let ann: string;
let bob: string;
let carl: string;
let eve: string;
let annKey: SoftAuthenticator;
let bobKey: SoftAuthenticator;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
  // WebAuthn refuses IP-address origins: without TOLLGATE_PUBLIC_URL the relying party is localhost:PORT.
  origin = `http://localhost:${new URL(server.url).port}`;
  root = await server.token('root', ['admin'], { name: 'Root' });
  agent = await server.token('pay-bot', ['agent']);
  ann = await server.token('ann', ['approver'], { name: 'Ann', email: 'ann@example.com' });
  bob = await server.token('bob', ['approver'], { name: 'Bob' });
  carl = await server.token('carl', ['approver'], { name: 'Carl' });
  eve = await server.token('eve', ['admin', 'approver'], { tenant: 'other', name: 'Eve' });
  const policy = await http.put('/v1/policy', root, {
    rules: [
      { match: 'wire_money', level: 'confirm', stepUp: 'passkey' },
      { match: 'close_books', level: 'confirm', stepUp: 'passkey', quorum: 2 },
      { match: 'pay_self', level: 'confirm', stepUp: 'passkey', selfApproval: false },
      { match: '*', level: 'confirm' },
    ],
  });
  expect(policy.status).toBe(200);
  annKey = new SoftAuthenticator(origin);
  bobKey = new SoftAuthenticator(origin);
  await register(ann, annKey);
  await register(bob, bobKey);
});

afterAll(async () => {
  await server?.stop();
});

/** Registers a first passkey for the person (no assertion needed). */
async function register(token: string, key: SoftAuthenticator, name?: string) {
  const options = await http.post('/v1/me/passkeys/options', token);
  expect(options.status).toBe(200);
  const res = await http.post('/v1/me/passkeys', token, {
    response: key.register(options.body.publicKey),
    ...(name ? { name } : {}),
  });
  expect(res.status).toBe(201);
  return res.body;
}

let n = 0;
async function held(toolName: string, args: Record<string, unknown> = { to: 'ACME', amount: 950000 }) {
  const conv = `pk-${++n}`;
  expect((await http.post('/v1/conversations', agent, { id: conv })).status).toBe(201);
  const r = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName, arguments: args }],
  });
  expect(r.body.toolCalls[0].status).toBe('pending');
  return r.body.toolCalls[0].id as string;
}

const stepUp = (id: string, token: string, body: unknown = {}) =>
  http.post(`/v1/tool-calls/${id}/step-up`, token, body);
const decide = (id: string, token: string, body: Record<string, unknown>) =>
  http.post(`/v1/tool-calls/${id}/decision`, token, body, { 'x-tollgate-channel': 'web' });

async function events(query: string): Promise<Json[]> {
  const r = await http.get(`/v1/audit/events?${query}&limit=1000`, root);
  expect(r.status).toBe(200);
  return r.body.events;
}

function expectProblem(res: { status: number; body: Json }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
}

describe('registering passkeys', () => {
  it('lists the passkeys a person registered, never their keys', async () => {
    const list = await http.get('/v1/me/passkeys', ann);
    expect(list.status).toBe(200);
    expect(list.body.passkeys).toEqual([
      {
        id: annKey.ids[0],
        name: 'Passkey 1',
        aaguid: annKey.aaguid,
        backedUp: false,
        createdAt: expect.any(String),
      },
    ]);
    const [registered] = await events('type=PasskeyRegistered');
    expect(registered).toBeDefined();
  });

  it('records the registration with the public key an auditor checks assertions with', async () => {
    const registered = (await events('type=PasskeyRegistered')).find((e) => e.data.credentialId === annKey.ids[0]);
    expect(registered.actor).toMatchObject({ id: 'ann', kind: 'person' });
    expect(registered.data).toMatchObject({
      personId: 'ann',
      aaguid: annKey.aaguid,
      name: 'Passkey 1',
      backedUp: false,
      deviceType: 'singleDevice',
      publicKey: expect.stringMatching(/^[A-Za-z0-9_-]{40,}$/),
    });
  });

  it('a second passkey needs an assertion with the first', async () => {
    const spare = new SoftAuthenticator(origin);
    const options = await http.post('/v1/me/passkeys/options', ann);
    expect(options.body.assertion.publicKey.allowCredentials.map((c: Json) => c.id)).toEqual(annKey.ids);
    const response = spare.register(options.body.publicKey);
    expectProblem(await http.post('/v1/me/passkeys', ann, { response }), 403, 'step_up_required');

    const again = await http.post('/v1/me/passkeys/options', ann);
    const added = await http.post('/v1/me/passkeys', ann, {
      response: spare.register(again.body.publicKey),
      assertion: annKey.assert(again.body.assertion.publicKey),
      name: 'Spare key',
    });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ id: spare.ids[1], name: 'Spare key' });
    expect((await http.get('/v1/me/passkeys', ann)).body.passkeys).toHaveLength(2);

    // Removed again, with an assertion made by the one removed.
    const opts = await http.post('/v1/me/passkeys/assertion-options', ann);
    expect(opts.status).toBe(200);
    const removed = await http.call('DELETE', `/v1/me/passkeys/${spare.ids[1]}`, {
      token: ann,
      body: { assertion: spare.assert(opts.body.publicKey, { credentialId: spare.ids[1] }) },
    });
    expect(removed.status).toBe(204);
    expect((await http.get('/v1/me/passkeys', ann)).body.passkeys.map((k: Json) => k.id)).toEqual(annKey.ids);
    const [gone] = (await events('type=PasskeyRemoved')).filter((e) => e.data.credentialId === spare.ids[1]);
    expect(gone.data).toEqual({ personId: 'ann', credentialId: spare.ids[1], removedBy: 'ann' });
  });

  it('a registration that does not verify is passkey_invalid: another origin, no user verification, a used challenge', async () => {
    const dave = await server.token('dave', ['approver']);
    const key = new SoftAuthenticator(origin);
    const o1 = await http.post('/v1/me/passkeys/options', dave);
    const r1 = await http.post('/v1/me/passkeys', dave, {
      response: key.register(o1.body.publicKey, { origin: 'https://evil.example' }),
    });
    expectProblem(r1, 400, 'passkey_invalid');
    const o2 = await http.post('/v1/me/passkeys/options', dave);
    expectProblem(
      await http.post('/v1/me/passkeys', dave, { response: key.register(o2.body.publicKey, { userVerified: false }) }),
      400,
      'passkey_invalid',
    );
    // o2's challenge was used up by the failed attempt.
    expectProblem(
      await http.post('/v1/me/passkeys', dave, { response: key.register(o2.body.publicKey) }),
      400,
      'passkey_invalid',
    );
    expectProblem(await http.post('/v1/me/passkeys', dave, { response: { id: 7 } }), 400, 'passkey_invalid');
    expectProblem(await http.post('/v1/me/passkeys', dave, { response: 'x' }), 400, 'validation_failed');
    expect((await http.get('/v1/me/passkeys', dave)).body.passkeys).toEqual([]);
  });

  it('an agent has no passkeys: 403 on every route', async () => {
    expectProblem(await http.get('/v1/me/passkeys', agent), 403, 'forbidden');
    expectProblem(await http.post('/v1/me/passkeys/options', agent), 403, 'forbidden');
    expectProblem(await http.post('/v1/me/passkeys', agent, { response: {} }), 403, 'forbidden');
    expectProblem(await http.post('/v1/me/passkeys/assertion-options', agent), 403, 'forbidden');
    const id = await held('wire_money');
    expectProblem(await stepUp(id, agent), 403, 'forbidden');
  });

  it('removing needs a valid assertion; an unknown id is 404', async () => {
    const none = await http.call('DELETE', `/v1/me/passkeys/${annKey.ids[0]}`, { token: ann, body: { assertion: {} } });
    expectProblem(none, 403, 'step_up_required');
    const opts = await http.post('/v1/me/passkeys/assertion-options', ann);
    const unknown = await http.call('DELETE', `/v1/me/passkeys/AAAA`, {
      token: ann,
      body: { assertion: annKey.assert(opts.body.publicKey) },
    });
    expectProblem(unknown, 404, 'not_found');
    // Bob cannot remove Ann's passkey: to him it does not exist.
    const bobOpts = await http.post('/v1/me/passkeys/assertion-options', bob);
    const other = await http.call('DELETE', `/v1/me/passkeys/${annKey.ids[0]}`, {
      token: bob,
      body: { assertion: bobKey.assert(bobOpts.body.publicKey) },
    });
    expectProblem(other, 404, 'not_found');
    expect((await http.get('/v1/me/passkeys', ann)).body.passkeys).toHaveLength(1);
  });
});

describe('approving a call whose rule asks for a passkey', () => {
  it('without a passkey: 403 step_up_required, recorded as DecisionRefused; the call waits', async () => {
    const id = await held('wire_money');
    const view = await http.get(`/v1/tool-calls/${id}`, ann);
    expect(view.body.approval.stepUp).toBe('passkey');
    const r = await decide(id, ann, { decision: 'approve' });
    expectProblem(r, 403, 'step_up_required');
    expect(r.body).toMatchObject({ toolCallId: id, card: `/#/calls/${id}`, stepUp: 'passkey' });
    const [refused] = await events(`type=DecisionRefused&toolCallId=${id}`);
    expect(refused.data).toMatchObject({ code: 'step_up_required', refusedBy: 'ann' });
    expect((await http.get(`/v1/tool-calls/${id}`, ann)).body.status).toBe('pending');
  });

  it('with one: approved, the proof on the decision, in ToolCallApproved and in the receipt', async () => {
    const id = await held('wire_money');
    const options = await stepUp(id, ann);
    expect(options.status).toBe(200);
    expect(options.body).toMatchObject({ toolCallId: id, argumentsDigest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(options.body.publicKey).toMatchObject({ rpId: 'localhost', userVerification: 'required' });
    const assertion = annKey.assert(options.body.publicKey);
    const r = await decide(id, ann, { decision: 'approve', stepUp: { passkey: assertion } });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('approved');
    expect(r.body.decision.stepUp).toEqual({
      method: 'passkey',
      credentialId: annKey.ids[0],
      aaguid: annKey.aaguid,
      userVerified: true,
    });
    const [approved] = await events(`type=ToolCallApproved&toolCallId=${id}`);
    expect(approved.data.stepUp).toEqual({
      method: 'passkey',
      credentialId: annKey.ids[0],
      aaguid: annKey.aaguid,
      userVerified: true,
      toolCallId: id,
      argumentsDigest: options.body.argumentsDigest,
      nonce: expect.any(String),
      publicKey: expect.any(String),
      assertion: {
        clientDataJSON: assertion.response.clientDataJSON,
        authenticatorData: assertion.response.authenticatorData,
        signature: assertion.response.signature,
      },
    });
    // What an auditor does with the trail alone: the key is the registered one, the challenge derives again from
    // the proof (docs/AUTH.md), and the signature checks with that key.
    const proof = approved.data.stepUp;
    const registered = (await events('type=PasskeyRegistered')).find((e) => e.data.credentialId === annKey.ids[0]);
    expect(proof.publicKey).toBe(registered.data.publicKey);
    const derived = createHash('sha256')
      .update(
        canonicalize({
          v: 'tollgate-step-up/1',
          tenant: 'default',
          toolCallId: id,
          argumentsDigest: proof.argumentsDigest,
          nonce: proof.nonce,
        })!,
      )
      .digest('base64url');
    const clientData = JSON.parse(Buffer.from(proof.assertion.clientDataJSON, 'base64url').toString());
    expect(clientData.challenge).toBe(derived);
    const signed = Buffer.concat([
      Buffer.from(proof.assertion.authenticatorData, 'base64url'),
      createHash('sha256').update(Buffer.from(proof.assertion.clientDataJSON, 'base64url')).digest(),
    ]);
    const cose = isoCBOR.decodeFirst<Map<number, Uint8Array>>(Buffer.from(proof.publicKey, 'base64url'));
    const key = createPublicKey({
      format: 'jwk',
      key: {
        kty: 'EC',
        crv: 'P-256',
        x: Buffer.from(cose.get(-2)!).toString('base64url'),
        y: Buffer.from(cose.get(-3)!).toString('base64url'),
      },
    });
    expect(verify('sha256', signed, key, Buffer.from(proof.assertion.signature, 'base64url'))).toBe(true);
    const claim = await http.post(`/v1/tool-calls/${id}/execution`, agent);
    expect(claim.status).toBe(200);
    const receipt = decodeJwt(claim.body.receipt);
    expect(receipt.args).toBe(options.body.argumentsDigest);
    expect(receipt.stepUp).toEqual([
      { by: 'ann', method: 'passkey', credentialId: annKey.ids[0], aaguid: annKey.aaguid, uv: true },
    ]);
    const passkeys = (await http.get('/v1/me/passkeys', ann)).body.passkeys;
    expect(passkeys[0].lastUsedAt).toEqual(expect.any(String));
  });

  it('a used challenge again: step_up_required', async () => {
    const id = await held('wire_money');
    const options = await stepUp(id, ann);
    const assertion = annKey.assert(options.body.publicKey);
    // Its first use, on another call, is a mismatch and uses it up.
    const other = await held('wire_money');
    expectProblem(
      await decide(other, ann, { decision: 'approve', stepUp: { passkey: assertion } }),
      403,
      'step_up_mismatch',
    );
    expectProblem(
      await decide(id, ann, { decision: 'approve', stepUp: { passkey: assertion } }),
      403,
      'step_up_required',
    );
    expect((await http.get(`/v1/tool-calls/${id}`, ann)).body.status).toBe('pending');
  });

  it('edited arguments: the challenge for the edit approves the edit; one for the original args is a mismatch', async () => {
    const id = await held('wire_money', { to: 'ACME', amount: 950000 });
    const edit = { to: 'ACME', amount: 1000 };
    const forOriginal = await stepUp(id, ann);
    expectProblem(
      await decide(id, ann, {
        decision: 'approve',
        arguments: edit,
        stepUp: { passkey: annKey.assert(forOriginal.body.publicKey) },
      }),
      403,
      'step_up_mismatch',
    );
    const forEdit = await stepUp(id, ann, { arguments: edit });
    expect(forEdit.body.argumentsDigest).not.toBe(forOriginal.body.argumentsDigest);
    const r = await decide(id, ann, {
      decision: 'approve',
      arguments: edit,
      stepUp: { passkey: annKey.assert(forEdit.body.publicKey) },
    });
    expect(r.status).toBe(200);
    expect(r.body.decision.editedArguments).toEqual(edit);
    const claim = await http.post(`/v1/tool-calls/${id}/execution`, agent);
    expect(claim.body.arguments).toEqual(edit);
    expect(decodeJwt(claim.body.receipt).args).toBe(forEdit.body.argumentsDigest);
  });

  it("another call's challenge: step_up_mismatch, recorded", async () => {
    const a = await held('wire_money');
    const b = await held('wire_money');
    const forA = await stepUp(a, ann);
    const r = await decide(b, ann, { decision: 'approve', stepUp: { passkey: annKey.assert(forA.body.publicKey) } });
    expectProblem(r, 403, 'step_up_mismatch');
    const [refused] = await events(`type=DecisionRefused&toolCallId=${b}`);
    expect(refused.data).toMatchObject({ code: 'step_up_mismatch', refusedBy: 'ann' });
  });

  it('no user verification, another origin, or another person’s passkey: step_up_required', async () => {
    const id = await held('wire_money');
    const o1 = await stepUp(id, ann);
    expectProblem(
      await decide(id, ann, {
        decision: 'approve',
        stepUp: { passkey: annKey.assert(o1.body.publicKey, { userVerified: false }) },
      }),
      403,
      'step_up_required',
    );
    const o2 = await stepUp(id, ann);
    expectProblem(
      await decide(id, ann, {
        decision: 'approve',
        stepUp: { passkey: annKey.assert(o2.body.publicKey, { origin: 'https://evil.example' }) },
      }),
      403,
      'step_up_required',
    );
    // Bob's passkey answering Ann's challenge, sent by Ann.
    const o3 = await stepUp(id, ann);
    const bobs = bobKey.assert({ ...o3.body.publicKey, allowCredentials: [] });
    expectProblem(await decide(id, ann, { decision: 'approve', stepUp: { passkey: bobs } }), 403, 'step_up_required');
    // Ann's challenge, signed by Bob's passkey and sent by Bob: the challenge is not his.
    const o4 = await stepUp(id, ann);
    const bobsOwn = bobKey.assert({ ...o4.body.publicKey, allowCredentials: [] });
    expectProblem(
      await decide(id, bob, { decision: 'approve', stepUp: { passkey: bobsOwn } }),
      403,
      'step_up_required',
    );
    // A signature that is not the authenticator's: one byte changed.
    const o5 = await stepUp(id, ann);
    const forged = annKey.assert(o5.body.publicKey);
    const sig = Buffer.from(forged.response.signature, 'base64url');
    sig[sig.length - 1] ^= 1;
    forged.response.signature = sig.toString('base64url');
    const refused = await decide(id, ann, { decision: 'approve', stepUp: { passkey: forged } });
    expectProblem(refused, 403, 'step_up_required');
    expect(refused.body.detail).toMatch(/did not verify/);
    // A malformed assertion proves nothing either.
    expectProblem(
      await decide(id, ann, { decision: 'approve', stepUp: { passkey: { id: 1, response: [] } } }),
      403,
      'step_up_required',
    );
    expect((await http.get(`/v1/tool-calls/${id}`, ann)).body.status).toBe('pending');
  });

  it('a rejection needs no passkey', async () => {
    const id = await held('wire_money');
    const r = await decide(id, ann, { decision: 'reject', reason: 'not today' });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('rejected');
  });

  it('the step-up route: 409 already_decided, step_up_not_required, no_passkey; 404 across tenants', async () => {
    const done = await held('wire_money');
    expect((await decide(done, ann, { decision: 'reject' })).status).toBe(200);
    expectProblem(await stepUp(done, ann), 409, 'already_decided');
    const plain = await held('send_invoice');
    expectProblem(await stepUp(plain, ann), 409, 'step_up_not_required');
    const id = await held('wire_money');
    const r = await stepUp(id, carl);
    expectProblem(r, 409, 'no_passkey');
    expect(r.body).toMatchObject({ toolCallId: id, card: `/#/calls/${id}`, stepUp: 'passkey' });
    expectProblem(await stepUp(id, eve), 404, 'not_found');
    expectProblem(await stepUp(id, ann, { arguments: 'x' }), 400, 'validation_failed');
  });

  it('a person of another tenant sees no call and cannot use the challenge', async () => {
    const eveKey = new SoftAuthenticator(origin);
    await register(eve, eveKey);
    const id = await held('wire_money');
    const options = await stepUp(id, ann);
    expectProblem(
      await decide(id, eve, {
        decision: 'approve',
        stepUp: { passkey: eveKey.assert({ ...options.body.publicKey, allowCredentials: [] }) },
      }),
      404,
      'not_found',
    );
    // Nor on a call of her own tenant: the challenge was issued in Ann's.
    const otherAgent = await server.token('other-bot', ['agent'], { tenant: 'other' });
    expect(
      (await http.put('/v1/policy', eve, { rules: [{ match: 'wire_money', level: 'confirm', stepUp: 'passkey' }] }))
        .status,
    ).toBe(200);
    expect((await http.post('/v1/conversations', otherAgent, { id: 'pk-other' })).status).toBe(201);
    const theirs = await http.post('/v1/conversations/pk-other/tool-calls', otherAgent, {
      toolCalls: [{ toolName: 'wire_money', arguments: { to: 'ACME', amount: 950000 } }],
    });
    const theirId = theirs.body.toolCalls[0].id;
    const eves = eveKey.assert({ ...options.body.publicKey, allowCredentials: [] });
    expectProblem(
      await decide(theirId, eve, { decision: 'approve', stepUp: { passkey: eves } }),
      403,
      'step_up_required',
    );
    // Ann's challenge is still good for Ann.
    const r = await decide(id, ann, {
      decision: 'approve',
      stepUp: { passkey: annKey.assert(options.body.publicKey) },
    });
    expect(r.status).toBe(200);
  });

  it('always_allow approves the call with a passkey but makes no grant', async () => {
    const id = await held('wire_money');
    const options = await stepUp(id, ann);
    const r = await decide(id, ann, {
      decision: 'always_allow',
      scope: 'conversation',
      stepUp: { passkey: annKey.assert(options.body.publicKey) },
    });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('approved');
    expect(await events(`type=GrantCreated&toolCallId=${id}`)).toEqual([]);
  });

  it('a quorum of two: each approval with its own person’s passkey, both in the receipt', async () => {
    const id = await held('close_books', { period: '2026-10' });
    const first = await stepUp(id, ann);
    const r1 = await decide(id, ann, { decision: 'approve', stepUp: { passkey: annKey.assert(first.body.publicKey) } });
    expect(r1.status).toBe(200);
    expect(r1.body.status).toBe('pending');
    // Ann's retry (a lost answer) is the same approval again: unchanged, not a refusal for want of a new passkey.
    const retry = await decide(id, ann, { decision: 'approve' });
    expect(retry.status).toBe(200);
    expect(retry.body.approval.quorum.approvedBy.map((a: { id: string }) => a.id)).toEqual(['ann']);
    // Bob's approval needs his own passkey too.
    expectProblem(await decide(id, bob, { decision: 'approve' }), 403, 'step_up_required');
    const second = await stepUp(id, bob);
    const r2 = await decide(id, bob, {
      decision: 'approve',
      stepUp: { passkey: bobKey.assert(second.body.publicKey) },
    });
    expect(r2.status).toBe(200);
    expect(r2.body.status).toBe('approved');
    const claim = await http.post(`/v1/tool-calls/${id}/execution`, agent);
    expect(decodeJwt(claim.body.receipt).stepUp).toEqual([
      { by: 'ann', method: 'passkey', credentialId: annKey.ids[0], aaguid: annKey.aaguid, uv: true },
      { by: 'bob', method: 'passkey', credentialId: bobKey.ids[0], aaguid: bobKey.aaguid, uv: true },
    ]);
    const [recorded] = await events(`type=ToolCallApprovalRecorded&toolCallId=${id}`);
    expect(recorded.data.stepUp).toMatchObject({ credentialId: annKey.ids[0], toolCallId: id });
    // The proof carries the passkey's public key: it checks on its own after a retention purge.
    expect(recorded.data.stepUp.publicKey).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const refusals = await events(`type=DecisionRefused&toolCallId=${id}`);
    expect(refusals.map((e) => e.actor.id)).toEqual(['bob']);
  });

  it('issues no challenge to someone separation of duties bars: their device never signs for nothing', async () => {
    const conv = `pk-self-${++n}`;
    await http.post('/v1/conversations', agent, { id: conv, user: { id: 'ann', roles: ['approver'] } });
    const r = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
      toolCalls: [{ toolName: 'pay_self', arguments: { amount: 5 } }],
    });
    const id = r.body.toolCalls[0].id;
    expectProblem(await stepUp(id, ann), 403, 'self_approval');
    expect((await stepUp(id, bob)).status).toBe(200);
  });

  it('a call whose rule asks no passkey carries no stepUp claim', async () => {
    const id = await held('send_invoice');
    expect((await decide(id, ann, { decision: 'approve' })).status).toBe(200);
    const claim = await http.post(`/v1/tool-calls/${id}/execution`, agent);
    expect(decodeJwt(claim.body.receipt).stepUp).toBeUndefined();
  });
});
