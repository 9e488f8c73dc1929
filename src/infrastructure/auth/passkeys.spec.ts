import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import type { HttpAdapterHost } from '@nestjs/core';
import type { TollgateConfig } from '../config/config';
import type { TypeOrmUnitOfWork } from '../persistence/unit-of-work';
import {
  digest,
  parseAssertion,
  parseRegistration,
  relyingPartyWarning,
  stepUpChallenge,
  STEP_UP_VERSION,
  WebAuthnPasskeys,
} from './passkeys';

const b64 = (s: string) => Buffer.from(s).toString('base64url');
const clientData = (challenge: unknown) => b64(JSON.stringify({ type: 'webauthn.get', challenge, origin: 'x' }));
const assertion = (over: Record<string, unknown> = {}, response: Record<string, unknown> = {}) => ({
  id: 'Y3JlZA',
  rawId: 'Y3JlZA',
  type: 'public-key',
  response: { clientDataJSON: clientData('Y2hhbGxlbmdl'), authenticatorData: 'AAAA', signature: 'AAAA', ...response },
  clientExtensionResults: { anything: true },
  ...over,
});

describe('the step-up challenge', () => {
  it('is SHA-256 of the RFC 8785 form of {v, tenant, toolCallId, argumentsDigest, nonce} (docs/AUTH.md)', () => {
    const c = { tenant: 'default', toolCallId: 'tc_1', argumentsDigest: digest({ b: 1, a: [2] }), nonce: 'bm9uY2U' };
    const expected = createHash('sha256')
      .update(
        `{"argumentsDigest":"${c.argumentsDigest}","nonce":"bm9uY2U","tenant":"default","toolCallId":"tc_1","v":"${STEP_UP_VERSION}"}`,
      )
      .digest();
    expect(Buffer.from(stepUpChallenge(c))).toEqual(expected);
    expect(Buffer.from(stepUpChallenge({ ...c, toolCallId: 'tc_2' }))).not.toEqual(expected);
  });

  it("derives the arguments' digest as a receipt's args claim does, whatever the key order", () => {
    expect(digest({ b: 1, a: [2] })).toBe(
      createHash('sha256')
        .update(canonicalize({ a: [2], b: 1 })!)
        .digest('hex'),
    );
  });
});

describe('what a browser sends, checked before the library reads it', () => {
  it('an assertion is rebuilt from its checked fields, extensions dropped, and names its challenge', () => {
    const p = parseAssertion(assertion({ authenticatorAttachment: 'platform', extra: 'ignored' }));
    expect(p).toEqual({
      ok: true,
      challenge: 'Y2hhbGxlbmdl',
      value: {
        id: 'Y3JlZA',
        rawId: 'Y3JlZA',
        type: 'public-key',
        response: { clientDataJSON: clientData('Y2hhbGxlbmdl'), authenticatorData: 'AAAA', signature: 'AAAA' },
        clientExtensionResults: {},
        authenticatorAttachment: 'platform',
      },
    });
  });

  it.each([
    ['not an object', 'x'],
    ['an array', []],
    ['another type', assertion({ type: 'password' })],
    ['a numeric id', assertion({ id: 7, rawId: 7 })],
    ['a rawId other than the id', assertion({ rawId: 'b3RoZXI' })],
    ['an id too long', assertion({ id: 'A'.repeat(1367), rawId: 'A'.repeat(1367) })],
    ['an id that is not base64url', assertion({ id: 'a+b/', rawId: 'a+b/' })],
    ['no response', assertion({ response: undefined })],
    ['a signature that is not a string', assertion({}, { signature: 12 })],
    ['a signature too long', assertion({}, { signature: 'A'.repeat(2049) })],
    ['client data too long', assertion({}, { clientDataJSON: 'A'.repeat(8193) })],
    ['client data that is not JSON', assertion({}, { clientDataJSON: b64('nope') })],
    ['client data without a challenge', assertion({}, { clientDataJSON: b64('{}') })],
    ['a challenge that is not a string', assertion({}, { clientDataJSON: clientData(5) })],
    ['a challenge too long', assertion({}, { clientDataJSON: clientData('A'.repeat(129)) })],
    ['a userHandle that is not a string', assertion({}, { userHandle: {} })],
  ])('an assertion with %s is refused', (_what, json) => {
    expect(parseAssertion(json)).toEqual({ ok: false, reason: expect.any(String) });
  });

  it('a registration needs an attestation object, and its transports are a short list of names', () => {
    const reg = (response: Record<string, unknown>) =>
      assertion({}, { authenticatorData: undefined, signature: undefined, ...response });
    const ok = parseRegistration(reg({ attestationObject: 'o2Nm', transports: ['internal', 'made-up'] }));
    expect(ok).toMatchObject({
      ok: true,
      value: { response: { attestationObject: 'o2Nm', transports: ['internal'] } },
    });
    expect(parseRegistration(reg({}))).toMatchObject({ ok: false });
    expect(parseRegistration(reg({ attestationObject: 'A'.repeat(65537) }))).toMatchObject({ ok: false });
    expect(parseRegistration(reg({ attestationObject: 'o2Nm', transports: 'usb' }))).toMatchObject({ ok: false });
    expect(parseRegistration(reg({ attestationObject: 'o2Nm', transports: [1] }))).toMatchObject({ ok: false });
    expect(parseRegistration(reg({ attestationObject: 'o2Nm', publicKeyAlgorithm: 'ES256' }))).toMatchObject({
      ok: false,
    });
  });
});

describe('the relying party', () => {
  const passkeys = (config: Partial<TollgateConfig>, port?: number) =>
    new WebAuthnPasskeys(
      {} as TypeOrmUnitOfWork,
      { host: '127.0.0.1', port: 8080, ...config } as TollgateConfig,
      port === undefined
        ? undefined
        : ({ httpAdapter: { getHttpServer: () => ({ address: () => ({ port }) }) } } as unknown as HttpAdapterHost),
    );

  it("is TOLLGATE_PUBLIC_URL's origin and host name", () => {
    expect(passkeys({ publicUrl: 'https://tg.example.com:8443/tollgate' }, 3000).relyingParty()).toEqual({
      origin: 'https://tg.example.com:8443',
      rpID: 'tg.example.com',
    });
  });

  it('without it, localhost on the port the server listens on (WebAuthn refuses IP addresses)', () => {
    expect(passkeys({}, 43117).relyingParty()).toEqual({ origin: 'http://localhost:43117', rpID: 'localhost' });
    expect(passkeys({}).relyingParty()).toEqual({ origin: 'http://localhost:8080', rpID: 'localhost' });
  });
});

describe('the start-up warning about where passkeys work', () => {
  it('names a TOLLGATE_PUBLIC_URL that is an IP address, and nothing else', () => {
    expect(relyingPartyWarning({ publicUrl: 'http://10.0.0.5:8080' })).toMatch(/IP address \(10\.0\.0\.5\)/);
    expect(relyingPartyWarning({ publicUrl: 'https://[2001:db8::1]' })).toMatch(/IP address/);
    expect(relyingPartyWarning({ publicUrl: 'https://tollgate.example.com' })).toBeUndefined();
    expect(relyingPartyWarning({})).toBeUndefined();
  });
});
