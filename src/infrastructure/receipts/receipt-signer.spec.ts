import { decodeJwt } from 'jose';
import { generateKeyPairSync } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../config/config';
import { JoseReceiptSigner } from './receipt-signer';

/** A signer with a configured key: it never opens the database, so none is given. */
function signer(env: Record<string, string>): JoseReceiptSigner {
  const signingKey = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  return new JoseReceiptSigner(undefined as unknown as DataSource, { ...loadConfig(env), signingKey });
}

const claims = {
  tcid: 'tc_1',
  conv: 'conv-1',
  tool: 'transfer',
  args: 'ab'.repeat(32),
  approvedBy: 'policy',
  tenant: 'acme',
};

describe('receipts name their tenant and audience', () => {
  it('carries the tenant it is given, and as audience TOLLGATE_RECEIPT_AUDIENCE, else TOLLGATE_PUBLIC_URL, else the address it serves on', async () => {
    const both = decodeJwt(
      await signer({
        TOLLGATE_PUBLIC_URL: 'https://tollgate.example.com/',
        TOLLGATE_RECEIPT_AUDIENCE: 'urn:acme:payments',
      }).sign(claims),
    );
    expect(both).toMatchObject({ tenant: 'acme', aud: 'urn:acme:payments', iss: 'tollgate' });
    expect(decodeJwt(await signer({ TOLLGATE_PUBLIC_URL: 'https://tollgate.example.com/' }).sign(claims)).aud).toBe(
      'https://tollgate.example.com',
    );
    expect(decodeJwt(await signer({ HOST: '10.0.0.5', PORT: '9000' }).sign(claims)).aud).toBe('http://10.0.0.5:9000');
    expect(decodeJwt(await signer({ HOST: '::1', PORT: '9000' }).sign(claims)).aud).toBe('http://[::1]:9000');
  });
});
