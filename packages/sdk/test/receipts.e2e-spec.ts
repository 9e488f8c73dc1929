/**
 * verifyReceipt, as a tool's backend uses it: it accepts the receipt of the call it is about to run and
 * refuses one for another tool, other arguments, another call, a forged or tampered token, and an expired one.
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { ReceiptVerificationError, verifyReceipt, type ExecutionClaim } from '@tollgate/sdk';
import { setUp, startTestServer, type Setup, type TestServer } from './support.js';

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
async function forged(claims: Record<string, unknown>, opts: { kid?: string; typ?: string; exp?: string | number } = {}): Promise<{ token: string; jwk: object }> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const kid = opts.kid ?? (await s.ann.getJwks()).keys[0].kid;
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'EdDSA', kid, typ: opts.typ ?? 'tollgate-receipt+jwt' })
    .setIssuer('tollgate')
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? '15m')
    .setJti('forged')
    .sign(privateKey);
  return { token, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'EdDSA', use: 'sig' } };
}

function payloadOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
}

describe('verifyReceipt', () => {
  it('accepts the receipt for this tool and exactly these arguments (in any key order), answering its claims', async () => {
    const reordered = { n: 1.5, options: { tags: ['a', 'b'], hard: true }, id: 'src_2' };
    const claims = await verifyReceipt(claim.receipt, { jwksUrl, toolName: 'get_source', arguments: reordered, toolCallId: claim.toolCall.id });
    expect(claims).toMatchObject({ tcid: claim.toolCall.id, conv: 'receipts', tool: 'get_source', approvedBy: 'policy', iss: 'tollgate', jti: expect.any(String) });
    expect(claims.exp - claims.iat).toBe(15 * 60);
  });

  it('refuses it for another tool, other arguments or another call', async () => {
    await expect(verifyReceipt(claim.receipt, { jwksUrl, toolName: 'delete_source', arguments: args })).rejects.toMatchObject({ name: 'ReceiptVerificationError', code: 'receipt_mismatch' });
    await expect(verifyReceipt(claim.receipt, { jwksUrl, toolName: 'get_source', arguments: { ...args, id: 'src_3' } })).rejects.toMatchObject({ code: 'receipt_mismatch', message: 'the receipt approves other arguments' });
    await expect(verifyReceipt(claim.receipt, { jwksUrl, toolName: 'get_source', arguments: { ...args, n: 1.50001 } })).rejects.toMatchObject({ code: 'receipt_mismatch' });
    await expect(verifyReceipt(claim.receipt, { jwksUrl, toolName: 'get_source', arguments: args, toolCallId: 'tc_other' })).rejects.toMatchObject({ code: 'receipt_mismatch' });
  });

  it('refuses a token signed with another key, even under the real kid and with the right claims', async () => {
    const real = payloadOf(claim.receipt);
    const { token } = await forged({ tcid: real.tcid, conv: real.conv, tool: real.tool, args: real.args, approvedBy: 'ann' });
    const error = await verifyReceipt(token, { jwksUrl, toolName: 'get_source', arguments: args }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReceiptVerificationError);
    expect(error).toMatchObject({ code: 'receipt_invalid' });
  });

  it('refuses a receipt whose payload was changed (another tool swapped in)', async () => {
    const [h, , sig] = claim.receipt.split('.');
    const payload = Buffer.from(JSON.stringify({ ...payloadOf(claim.receipt), tool: 'delete_source' })).toString('base64url');
    await expect(verifyReceipt(`${h}.${payload}.${sig}`, { jwksUrl, toolName: 'delete_source', arguments: args })).rejects.toMatchObject({ code: 'receipt_invalid' });
  });

  it('refuses a token of another type (an audit checkpoint, signed by the same key)', async () => {
    const checkpoint = await s.ann.getAuditCheckpoint();
    await expect(verifyReceipt(checkpoint.jws, { jwksUrl, toolName: 'get_source', arguments: args })).rejects.toMatchObject({ code: 'receipt_invalid' });
  });

  it('refuses an expired receipt (checked with the key set given directly)', async () => {
    const real = payloadOf(claim.receipt);
    const { token, jwk } = await forged({ tcid: real.tcid, conv: real.conv, tool: 'get_source', args: real.args, approvedBy: 'policy' }, { kid: 'local', exp: Math.floor(Date.now() / 1000) - 120 });
    await expect(verifyReceipt(token, { jwks: { keys: [jwk as never] }, toolName: 'get_source', arguments: args })).rejects.toMatchObject({ code: 'receipt_expired' });
    // The same key set accepts a fresh one of that key: what failed above was the expiry alone.
    const fresh = await forged({ tcid: real.tcid, conv: real.conv, tool: 'get_source', args: real.args, approvedBy: 'policy' }, { kid: 'local' });
    await expect(verifyReceipt(fresh.token, { jwks: { keys: [fresh.jwk as never] }, toolName: 'get_source', arguments: args })).resolves.toMatchObject({ jti: 'forged' });
  });

  it('refuses what is not a JWS at all', async () => {
    await expect(verifyReceipt('not.a.receipt', { jwksUrl, toolName: 'get_source', arguments: args })).rejects.toMatchObject({ code: 'receipt_invalid' });
  });
});
