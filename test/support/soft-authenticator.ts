/**
 * A software WebAuthn authenticator for tests: ES256 (P-256) keys from node:crypto, attestation `none`, its
 * flags (user present, user verified) and the origin its "browser" reports settable per ceremony. It answers the
 * options the server gives (PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON) with
 * the JSON @simplewebauthn/browser would send (RegistrationResponseJSON, AuthenticationResponseJSON).
 */
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { createHash, generateKeyPairSync, KeyObject, randomBytes, sign } from 'node:crypto';

type Json = Record<string, any>;

export interface Ceremony {
  /** The UP flag (default true). */
  userPresent?: boolean;
  /** The UV flag (default true). */
  userVerified?: boolean;
  /** The origin the client data names (default the authenticator's). */
  origin?: string;
  /** Assertions: the passkey to use (default the first of the options' allowCredentials this authenticator holds). */
  credentialId?: string;
}

interface Credential {
  id: string;
  privateKey: KeyObject;
  rpId: string;
  userHandle: string;
  counter: number;
}

const b64u = (b: Uint8Array | Buffer | string) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest();

export class SoftAuthenticator {
  /** An AAGUID the test can recognise (any 16 bytes; zeros mean "not said"). */
  readonly aaguid: string;
  private readonly credentials = new Map<string, Credential>();

  constructor(
    readonly origin: string,
    aaguid = '5eb1e1a5-0000-4000-8000-00000000a11c',
  ) {
    this.aaguid = aaguid;
  }

  get ids(): string[] {
    return [...this.credentials.keys()];
  }

  /** navigator.credentials.create(): a new ES256 credential for the options' relying party. */
  register(options: Json, c: Ceremony = {}): Json {
    const rpId: string = options.rp.id;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const id = randomBytes(16);
    const cred: Credential = {
      id: b64u(id),
      privateKey,
      rpId,
      userHandle: options.user.id,
      counter: 0,
    };
    // COSE_Key, EC2: kty 2, alg -7 (ES256), crv 1 (P-256), x, y.
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
        [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
      ]),
    );
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const attested = Buffer.concat([uuidBytes(this.aaguid), idLength, id, Buffer.from(cose)]);
    const authData = authenticatorData(rpId, flags(c) | 0x40, cred.counter, attested);
    const clientDataJSON = clientData('webauthn.create', options.challenge, c.origin ?? this.origin);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Map<string, string> | Uint8Array>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, string>()],
        ['authData', new Uint8Array(authData)],
      ]),
    );
    this.credentials.set(cred.id, cred);
    return {
      id: cred.id,
      rawId: cred.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64u(clientDataJSON),
        attestationObject: b64u(attestationObject),
        transports: ['internal'],
        publicKeyAlgorithm: -7,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** navigator.credentials.get(): an assertion with one of this authenticator's credentials. */
  assert(options: Json, c: Ceremony = {}): Json {
    const allowed: string[] = (options.allowCredentials ?? []).map((a: Json) => a.id);
    const id = c.credentialId ?? this.ids.find((i) => allowed.length === 0 || allowed.includes(i));
    const cred = id && this.credentials.get(id);
    if (!cred) throw new Error('The soft authenticator holds none of the allowed credentials');
    cred.counter += 1;
    const authData = authenticatorData(options.rpId ?? cred.rpId, flags(c), cred.counter);
    const clientDataJSON = clientData('webauthn.get', options.challenge, c.origin ?? this.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), cred.privateKey);
    return {
      id: cred.id,
      rawId: cred.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64u(clientDataJSON),
        authenticatorData: b64u(authData),
        signature: b64u(signature),
        userHandle: cred.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}

function flags(c: Ceremony): number {
  return (c.userPresent === false ? 0 : 0x01) | (c.userVerified === false ? 0 : 0x04);
}

function authenticatorData(rpId: string, flagBits: number, counter: number, attested?: Buffer): Buffer {
  const count = Buffer.alloc(4);
  count.writeUInt32BE(counter);
  return Buffer.concat([sha256(rpId), Buffer.from([flagBits]), count, ...(attested ? [attested] : [])]);
}

function clientData(type: string, challenge: string, origin: string): Buffer {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

function uuidBytes(uuid: string): Buffer {
  return Buffer.from(uuid.replace(/-/g, ''), 'hex');
}
