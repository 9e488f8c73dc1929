/**
 * verifyReceipt, as a tool's backend uses it: it accepts the receipt of the call it is about to run and
 * refuses one for another tool, other arguments, another call, a forged or tampered token, and an expired one.
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  MemoryReplayStore,
  ReceiptVerificationError,
  Tollgate,
  verifyReceipt,
  type ExecutionClaim,
} from '@tollgate/sdk';
import {
  PASSKEY_POLICY,
  registerPasskey,
  setUp,
  startTestServer,
  type Setup,
  type SoftAuthenticator,
  type TestServer,
} from './support.js';

let server: TestServer;
let s: Setup;
let claim: ExecutionClaim;
let jwksUrl: string;
const args = { id: 'src_2', options: { hard: true, tags: ['a', 'b'] }, n: 1.5 };

beforeAll(async () => {
  server = await startTestServer();
  s = await setUp(server);
  jwksUrl = `${server.url}/.well-known/jwks.json`;
  const conv = await s.agent().conversation({ id: 'receipts', user: { id: 'ann', roles: ['admin'] } });
  const [handle] = await conv.proposeStep([{ toolName: 'get_source', arguments: args }]);
  claim = await handle.claim();
});

afterAll(async () => {
  await server?.stop();
});

/** A receipt-shaped token signed with a key Tollgate never published, under the kid of the real one. */
async function forged(
  claims: Record<string, unknown>,
  opts: { kid?: string; typ?: string; exp?: string | number; jti?: string } = {},
): Promise<{ token: string; jwk: object }> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const kid = opts.kid ?? (await s.ann.getJwks()).keys[0].kid;
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'EdDSA', kid, typ: opts.typ ?? 'tollgate-receipt+jwt' })
    .setIssuer('tollgate')
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? '15m')
    .setJti(opts.jti ?? 'forged')
    .sign(privateKey);
  return { token, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' } };
}

function payloadOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
}

describe('verifyReceipt', () => {
  it('accepts the receipt for this tenant, tool and exactly these arguments (in any key order), answering its claims', async () => {
    const reordered = { n: 1.5, options: { tags: ['a', 'b'], hard: true }, id: 'src_2' };
    const claims = await verifyReceipt(claim.receipt, {
      jwksUrl,
      tenant: 'default',
      toolName: 'get_source',
      arguments: reordered,
      toolCallId: claim.toolCall.id,
    });
    expect(claims).toMatchObject({
      tcid: claim.toolCall.id,
      conv: 'receipts',
      tool: 'get_source',
      approvedBy: 'policy',
      tenant: 'default',
      aud: server.url,
      iss: 'tollgate',
      jti: expect.any(String),
    });
    expect(claims.exp - claims.iat).toBe(15 * 60);
  });

  it('refuses it for another tool, other arguments or another call', async () => {
    await expect(
      verifyReceipt(claim.receipt, { jwksUrl, tenant: 'default', toolName: 'delete_source', arguments: args }),
    ).rejects.toMatchObject({ name: 'ReceiptVerificationError', code: 'receipt_mismatch' });
    await expect(
      verifyReceipt(claim.receipt, {
        jwksUrl,
        tenant: 'default',
        toolName: 'get_source',
        arguments: { ...args, id: 'src_3' },
      }),
    ).rejects.toMatchObject({ code: 'receipt_mismatch', message: 'the receipt approves other arguments' });
    await expect(
      verifyReceipt(claim.receipt, {
        jwksUrl,
        tenant: 'default',
        toolName: 'get_source',
        arguments: { ...args, n: 1.50001 },
      }),
    ).rejects.toMatchObject({ code: 'receipt_mismatch' });
    await expect(
      verifyReceipt(claim.receipt, {
        jwksUrl,
        tenant: 'default',
        toolName: 'get_source',
        arguments: args,
        toolCallId: 'tc_other',
      }),
    ).rejects.toMatchObject({ code: 'receipt_mismatch' });
  });

  it('refuses a token signed with another key, even under the real kid and with the right claims', async () => {
    const real = payloadOf(claim.receipt);
    const { token } = await forged({
      tcid: real.tcid,
      conv: real.conv,
      tool: real.tool,
      args: real.args,
      approvedBy: 'ann',
      tenant: 'default',
    });
    const error = await verifyReceipt(token, {
      jwksUrl,
      tenant: 'default',
      toolName: 'get_source',
      arguments: args,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReceiptVerificationError);
    expect(error).toMatchObject({ code: 'receipt_invalid' });
  });

  it('refuses a receipt whose payload was changed (another tool swapped in)', async () => {
    const [h, , sig] = claim.receipt.split('.');
    const payload = Buffer.from(JSON.stringify({ ...payloadOf(claim.receipt), tool: 'delete_source' })).toString(
      'base64url',
    );
    await expect(
      verifyReceipt(`${h}.${payload}.${sig}`, {
        jwksUrl,
        tenant: 'default',
        toolName: 'delete_source',
        arguments: args,
      }),
    ).rejects.toMatchObject({ code: 'receipt_invalid' });
  });

  it('refuses a token of another type (an audit checkpoint, signed by the same key)', async () => {
    const checkpoint = await s.ann.getAuditCheckpoint();
    await expect(
      verifyReceipt(checkpoint.jws, { jwksUrl, tenant: 'default', toolName: 'get_source', arguments: args }),
    ).rejects.toMatchObject({ code: 'receipt_invalid' });
  });

  it('refuses an expired receipt (checked with the key set given directly)', async () => {
    const real = payloadOf(claim.receipt);
    const { token, jwk } = await forged(
      {
        tcid: real.tcid,
        conv: real.conv,
        tool: 'get_source',
        args: real.args,
        approvedBy: 'policy',
        tenant: 'default',
      },
      { kid: 'local', exp: Math.floor(Date.now() / 1000) - 120 },
    );
    await expect(
      verifyReceipt(token, {
        jwks: { keys: [jwk as never] },
        tenant: 'default',
        toolName: 'get_source',
        arguments: args,
      }),
    ).rejects.toMatchObject({ code: 'receipt_expired' });
    // The same key set accepts a fresh one of that key: what failed above was the expiry alone.
    const fresh = await forged(
      {
        tcid: real.tcid,
        conv: real.conv,
        tool: 'get_source',
        args: real.args,
        approvedBy: 'policy',
        tenant: 'default',
      },
      { kid: 'local' },
    );
    await expect(
      verifyReceipt(fresh.token, {
        jwks: { keys: [fresh.jwk as never] },
        tenant: 'default',
        toolName: 'get_source',
        arguments: args,
      }),
    ).resolves.toMatchObject({ jti: 'forged' });
  });

  it('refuses what is not a JWS at all', async () => {
    await expect(
      verifyReceipt('not.a.receipt', { jwksUrl, tenant: 'default', toolName: 'get_source', arguments: args }),
    ).rejects.toMatchObject({ code: 'receipt_invalid' });
  });

  it('refuses a receipt of another tenant: its admin lets everything through, but this backend trusts its own tenant only', async () => {
    const mallory = new Tollgate({
      url: server.url,
      token: await server.token('mallory', ['admin'], { tenant: 'tenant-b' }),
    });
    await mallory.putPolicy({ rules: [{ match: '*', level: 'automatic' }] });
    const agentB = new Tollgate({
      url: server.url,
      token: await server.token('bot-b', ['agent'], { tenant: 'tenant-b' }),
    });
    const transfer = { to: 'mallory', amount: 1_000_000 };
    const [handle] = await (
      await agentB.conversation({ id: 'transfer' })
    ).proposeStep([{ toolName: 'transfer', arguments: transfer }]);
    const { receipt } = await handle.claim();
    const error = await verifyReceipt(receipt, {
      jwksUrl,
      tenant: 'default',
      toolName: 'transfer',
      arguments: transfer,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'receipt_mismatch',
      message: 'the receipt is for tenant "tenant-b", not "default"',
    });
    // The same receipt, checked by tenant B's own backend, is good: what failed above was the tenant alone.
    await expect(
      verifyReceipt(receipt, { jwksUrl, tenant: 'tenant-b', toolName: 'transfer', arguments: transfer }),
    ).resolves.toMatchObject({ tenant: 'tenant-b' });
  });

  it('will not check a receipt without being told which tenant it trusts', async () => {
    const noTenant = { jwksUrl, toolName: 'get_source', arguments: args } as unknown as Parameters<
      typeof verifyReceipt
    >[1];
    await expect(verifyReceipt(claim.receipt, noTenant)).rejects.toThrow(TypeError);
    await expect(verifyReceipt(claim.receipt, noTenant)).rejects.toThrow(/verifyReceipt needs tenant/);
    await expect(verifyReceipt(claim.receipt, { ...noTenant, tenant: '' })).rejects.toThrow(TypeError);
  });

  it('checks the audience when given: the server’s URL unless TOLLGATE_RECEIPT_AUDIENCE or TOLLGATE_PUBLIC_URL say otherwise', async () => {
    const o = { jwksUrl, tenant: 'default', toolName: 'get_source', arguments: args };
    await expect(verifyReceipt(claim.receipt, { ...o, audience: server.url })).resolves.toMatchObject({
      aud: server.url,
    });
    await expect(
      verifyReceipt(claim.receipt, { ...o, audience: 'https://tollgate.example.com' }),
    ).rejects.toMatchObject({
      code: 'receipt_mismatch',
      message: `the receipt is for audience ${JSON.stringify(server.url)}, not "https://tollgate.example.com"`,
    });
  });

  it('refuses a receipt seen before with a replay store, and does not spend one it refused for other reasons', async () => {
    const [handle] = await (
      await s.agent().conversation({ id: 'receipts-replay', user: { id: 'ann', roles: ['admin'] } })
    ).proposeStep([{ toolName: 'get_source', arguments: { id: 'src_9' } }]);
    const { receipt } = await handle.claim();
    const replayStore = new MemoryReplayStore();
    const o = { jwksUrl, tenant: 'default', toolName: 'get_source', arguments: { id: 'src_9' }, replayStore };
    await expect(verifyReceipt(receipt, { ...o, arguments: { id: 'src_10' } })).rejects.toMatchObject({
      code: 'receipt_mismatch',
    });
    const claims = await verifyReceipt(receipt, o);
    await expect(verifyReceipt(receipt, o)).rejects.toMatchObject({
      name: 'ReceiptVerificationError',
      code: 'receipt_replayed',
      message: `the receipt was used before (jti ${claims.jti})`,
    });
    // Another receipt goes through the same store; the first is still refused.
    await expect(verifyReceipt(claim.receipt, { ...o, arguments: args })).resolves.toMatchObject({
      tcid: claim.toolCall.id,
    });
    await expect(verifyReceipt(receipt, o)).rejects.toMatchObject({ code: 'receipt_replayed' });
  });

  it('passes the store the receipt’s jti and the moment after which it is refused anyway (exp + clock tolerance)', async () => {
    const asked: Array<[string, number]> = [];
    const replayStore = { seen: async (jti: string, expiresAt: number) => (asked.push([jti, expiresAt]), false) };
    const claims = await verifyReceipt(claim.receipt, {
      jwksUrl,
      tenant: 'default',
      toolName: 'get_source',
      arguments: args,
      replayStore,
      clockTolerance: 5,
    });
    expect(asked).toEqual([[claims.jti, claims.exp + 5]]);
    const failing = { seen: () => Promise.reject(new Error('the store is down')) };
    await expect(
      verifyReceipt(claim.receipt, {
        jwksUrl,
        tenant: 'default',
        toolName: 'get_source',
        arguments: args,
        replayStore: failing,
      }),
    ).rejects.toThrow('the store is down');
  });

  it('refuses a receipt whose jti (or another text claim) is missing or not a string', async () => {
    const real = payloadOf(claim.receipt);
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'local', alg: 'EdDSA' }] as never[] };
    const sign = (extra: Record<string, unknown>) =>
      new SignJWT({
        tcid: real.tcid,
        conv: real.conv,
        tool: 'get_source',
        args: real.args,
        approvedBy: 'policy',
        tenant: 'default',
        ...extra,
      })
        .setProtectedHeader({ alg: 'EdDSA', kid: 'local', typ: 'tollgate-receipt+jwt' })
        .setIssuer('tollgate')
        .setIssuedAt()
        .setExpirationTime('15m')
        .sign(privateKey);
    const o = {
      jwks,
      tenant: 'default',
      toolName: 'get_source',
      arguments: args,
      replayStore: new MemoryReplayStore(),
    };
    await expect(verifyReceipt(await sign({}), o)).rejects.toMatchObject({ code: 'receipt_invalid' });
    await expect(verifyReceipt(await sign({ jti: 42 }), o)).rejects.toMatchObject({
      code: 'receipt_invalid',
      message: "the receipt's jti is not a non-empty string",
    });
    await expect(verifyReceipt(await sign({ jti: '' }), o)).rejects.toMatchObject({ code: 'receipt_invalid' });
    await expect(verifyReceipt(await sign({ jti: 'j1', tenant: ['default'] }), o)).rejects.toMatchObject({
      code: 'receipt_invalid',
      message: "the receipt's tenant is not a non-empty string",
    });
    await expect(verifyReceipt(await sign({ jti: 'j1' }), o)).resolves.toMatchObject({ jti: 'j1' });
  });

  it('refuses a signature with characters appended or its unused bits changed', async () => {
    const o = { jwksUrl, tenant: 'default', toolName: 'get_source', arguments: args };
    const sig = claim.receipt.split('.')[2];
    // 64 bytes take 86 characters: the last one carries 2 bits of the signature and 4 that must be zero.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(sig.at(-1)!);
    const sameBits = `${claim.receipt.slice(0, -1)}${alphabet[last ^ 1]}`;
    for (const bad of [`${claim.receipt}$$$`, `${claim.receipt}=`, `${claim.receipt}A`, sameBits]) {
      await expect(verifyReceipt(bad, o)).rejects.toMatchObject({ code: 'receipt_invalid' });
    }
  });

  it('refuses arguments no server could have approved (a lone surrogate) as another call', async () => {
    await expect(
      verifyReceipt(claim.receipt, {
        jwksUrl,
        tenant: 'default',
        toolName: 'get_source',
        arguments: { ...args, id: '\ud800' },
      }),
    ).rejects.toMatchObject({ code: 'receipt_mismatch' });
  });

  it('fetches the key set again for an unknown kid at most once per cooldown, not for every receipt', async () => {
    let fetches = 0;
    const jwks = JSON.stringify(await s.ann.getJwks());
    const keyServer: Server = createServer((_req, res) => {
      fetches++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
    });
    await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}/.well-known/jwks.json`;
      const real = payloadOf(claim.receipt);
      for (let i = 0; i < 5; i++) {
        const { token } = await forged({ ...real, tenant: 'default' }, { kid: `rotated-${i}` });
        await expect(
          verifyReceipt(token, { jwksUrl: url, tenant: 'default', toolName: 'get_source', arguments: args }),
        ).rejects.toMatchObject({ code: 'receipt_invalid' });
      }
      expect(fetches).toBe(1); // the key set was fetched a moment ago: an unknown kid within the cooldown fetches nothing
    } finally {
      keyServer.close();
    }
  });
});

describe('verifyReceipt with requireStepUp', () => {
  const wire = { to: 'ACME', amount: 950000 };
  let key: SoftAuthenticator;
  let withPasskey: ExecutionClaim;

  beforeAll(async () => {
    // A call whose rule says stepUp: passkey, approved by Ann with her passkey, then claimed by the agent.
    await s.ann.putPolicy(PASSKEY_POLICY);
    key = await registerPasskey(server, s.ann);
    const conv = await s.agent().conversation({ id: 'receipts-passkey', user: { id: 'zed', roles: ['user'] } });
    const [handle] = await conv.proposeStep([{ toolName: 'wire_money', arguments: wire }]);
    const options = await s.ann.inbox().stepUp(handle.id);
    await s.ann.inbox().approve(handle.id, { stepUp: { passkey: key.assert(options.publicKey) } });
    withPasskey = await handle.claim();
  });

  it('accepts the receipt of a call approved with a passkey, answering the passkey in its stepUp claim', async () => {
    const claims = await verifyReceipt(withPasskey.receipt, {
      jwksUrl,
      tenant: 'default',
      toolName: 'wire_money',
      arguments: wire,
      requireStepUp: true,
    });
    expect(claims).toMatchObject({ tcid: withPasskey.toolCall.id, approvedBy: 'ann' });
    expect(claims.stepUp).toEqual([
      { by: 'ann', method: 'passkey', credentialId: key.ids[0], aaguid: key.aaguid, uv: true },
    ]);
  });

  it('refuses a receipt without the claim as receipt_mismatch, and takes it when not asked to', async () => {
    expect(payloadOf(claim.receipt).stepUp).toBeUndefined();
    const o = { jwksUrl, tenant: 'default', toolName: 'get_source', arguments: args };
    await expect(verifyReceipt(claim.receipt, { ...o, requireStepUp: true })).rejects.toMatchObject({
      name: 'ReceiptVerificationError',
      code: 'receipt_mismatch',
      message: 'the receipt has no stepUp: the call was not approved with a passkey',
    });
    await expect(verifyReceipt(claim.receipt, { ...o, requireStepUp: false })).resolves.toMatchObject({
      tool: 'get_source',
    });
  });

  it('refuses an empty or malformed stepUp claim, even signed by a trusted key', async () => {
    const real = payloadOf(withPasskey.receipt);
    const o = { tenant: 'default', toolName: 'wire_money', arguments: wire, requireStepUp: true };
    const entry = { by: 'ann', method: 'passkey', credentialId: key.ids[0], aaguid: key.aaguid, uv: true };
    for (const stepUp of [[], {}, 'passkey', [null], [{ ...entry, uv: false }], [{ ...entry, method: 'totp' }]]) {
      const { token, jwk } = await forged({ ...real, stepUp, jti: undefined, iat: undefined, exp: undefined });
      await expect(verifyReceipt(token, { ...o, jwks: { keys: [jwk as never] } })).rejects.toMatchObject({
        code: 'receipt_mismatch',
      });
    }
    // The same forged key with a well-formed claim passes: the refusals above are the claim's.
    const { token, jwk } = await forged({ ...real, stepUp: [entry], jti: undefined, iat: undefined, exp: undefined });
    await expect(verifyReceipt(token, { ...o, jwks: { keys: [jwk as never] } })).resolves.toMatchObject({
      stepUp: [entry],
    });
  });
});

describe('MemoryReplayStore', () => {
  it('remembers a jti until it expires, then forgets it', () => {
    let now = 1_000;
    const store = new MemoryReplayStore({ now: () => now });
    expect(store.seen('a', 1_100)).toBe(false);
    expect(store.seen('a', 1_100)).toBe(true);
    now = 1_101;
    expect(store.seen('a', 2_000)).toBe(false);
  });

  it('holds at most maxEntries unexpired receipts: it drops expired ones, and refuses rather than forget a live one', () => {
    let now = 1_000;
    const store = new MemoryReplayStore({ maxEntries: 2, now: () => now });
    expect(store.seen('a', 1_100)).toBe(false);
    expect(store.seen('b', 1_500)).toBe(false);
    now = 1_200; // a has expired
    expect(store.seen('c', 1_500)).toBe(false);
    expect(() => store.seen('d', 1_500)).toThrow(RangeError);
    expect(store.seen('b', 1_500)).toBe(true); // still known: nothing live was forgotten
    expect(() => new MemoryReplayStore({ maxEntries: 0 })).toThrow(RangeError);
  });
});
