import { ConfigError, loadConfig } from './config';

describe('TOLLGATE_PUBLIC_URL and TOLLGATE_RECEIPT_AUDIENCE', () => {
  it('are unset unless given; the public URL loses a trailing slash, the audience is kept as written', () => {
    expect(loadConfig({})).toMatchObject({ publicUrl: undefined, receiptAudience: undefined });
    expect(loadConfig({ TOLLGATE_PUBLIC_URL: 'https://tollgate.example.com/' }).publicUrl).toBe(
      'https://tollgate.example.com',
    );
    expect(loadConfig({ TOLLGATE_PUBLIC_URL: ' http://10.0.0.5:8080/tollgate ' }).publicUrl).toBe(
      'http://10.0.0.5:8080/tollgate',
    );
    expect(loadConfig({ TOLLGATE_RECEIPT_AUDIENCE: 'urn:acme:payments' }).receiptAudience).toBe('urn:acme:payments');
  });

  it('refuses a public URL that is not an absolute http(s) URL, and an audience with control characters, naming the setting', () => {
    for (const bad of [
      'tollgate.example.com',
      'ftp://tollgate.example.com',
      'https://',
      'https://tollgate.example.com/?a=1',
      'https://tollgate.example.com/#x',
      'https://user:pw@tollgate.example.com',
    ]) {
      expect(() => loadConfig({ TOLLGATE_PUBLIC_URL: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ TOLLGATE_PUBLIC_URL: bad })).toThrow(/^TOLLGATE_PUBLIC_URL /);
    }
    expect(() => loadConfig({ TOLLGATE_RECEIPT_AUDIENCE: 'a\nb' })).toThrow(/^TOLLGATE_RECEIPT_AUDIENCE /);
    expect(() => loadConfig({ TOLLGATE_RECEIPT_AUDIENCE: 'x'.repeat(1025) })).toThrow(/^TOLLGATE_RECEIPT_AUDIENCE /);
  });
});
