import { generateRequestDetails, generateVAPIDKeys } from 'web-push';
import { BrowserSubscription, verifyVapid } from './push-service';

/**
 * The push service stand-in decrypts and verifies as a browser and a push service do, not as web-push does: it is
 * checked against the RFC's own test vector first, then against what web-push makes.
 */
describe('the push service stand-in', () => {
  it('decrypts the RFC 8291 Appendix A message to its plaintext', () => {
    const b64 = (s: string) => Buffer.from(s, 'base64url');
    const browser = new BrowserSubscription('https://push.example.net/push/JzLQ3raZJfFBR0aqvOMsLrt54w4rJUsV', {
      privateKey: b64('q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94'),
      authSecret: b64('BTBZMqHH6r4Tts7J_aSIgg'),
    });
    expect(browser.toJSON().keys.p256dh).toBe(
      'BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4',
    );
    const body = b64(
      'DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN',
    );
    expect(browser.decrypt(body)).toBe('When I grow up, I want to be a watermelon');
  });

  it('refuses a body altered in transit', () => {
    const browser = new BrowserSubscription('https://push.example.net/push/1');
    const { body } = generateRequestDetails(browser.toJSON(), 'hello', { TTL: 60 });
    body[body.length - 1] ^= 1;
    expect(() => browser.decrypt(body)).toThrow();
  });

  it("verifies web-push's VAPID header for the push service's origin, and nothing else", () => {
    const keys = generateVAPIDKeys();
    const browser = new BrowserSubscription('https://push.example.net/push/1');
    const { headers, body } = generateRequestDetails(browser.toJSON(), 'hello', {
      TTL: 60,
      vapidDetails: { subject: 'mailto:ops@example.com', ...keys },
    });
    expect(browser.decrypt(body)).toBe('hello');
    const auth = String(headers.Authorization);
    expect(verifyVapid(auth, 'https://push.example.net')).toMatchObject({
      key: keys.publicKey,
      claims: { aud: 'https://push.example.net', sub: 'mailto:ops@example.com' },
    });
    expect(() => verifyVapid(auth, 'https://other.example.net')).toThrow(/aud/);
    const [t, k] = auth.split(', ');
    expect(() => verifyVapid(`${t}, k=${generateVAPIDKeys().publicKey}`, 'https://push.example.net')).toThrow(
      /signature/,
    );
    expect(() => verifyVapid(`${t.slice(0, -2)}AA, ${k}`, 'https://push.example.net')).toThrow(/signature/);
  });
});
