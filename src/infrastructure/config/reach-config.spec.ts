import { ConfigError, loadConfig } from './config';

describe('email settings', () => {
  it('are off unless TOLLGATE_SMTP_URL is set, and need both the URL and the From address', () => {
    expect(loadConfig({}).email).toBeUndefined();
    expect(() => loadConfig({ TOLLGATE_SMTP_FROM: 'tollgate@example.com' })).toThrow(/TOLLGATE_SMTP_URL is not/);
    expect(() => loadConfig({ TOLLGATE_SMTP_URL: 'smtp://mail.example.com' })).toThrow(/TOLLGATE_SMTP_FROM is not/);
    expect(
      loadConfig({
        TOLLGATE_SMTP_URL: 'smtps://u:p@mail.example.com:465',
        TOLLGATE_SMTP_FROM: 'Tollgate <tg@example.com>',
      }).email,
    ).toEqual({ smtpUrl: 'smtps://u:p@mail.example.com:465', from: 'Tollgate <tg@example.com>' });
  });

  it('refuse a URL that is not SMTP, and a From that is not an address, without repeating the URL (it may hold a password)', () => {
    const from = { TOLLGATE_SMTP_FROM: 'tg@example.com' };
    for (const url of ['https://u:hunter2@relay.corp', 'relay.corp:hunter2', 'smtp://']) {
      let error: unknown;
      try {
        loadConfig({ ...from, TOLLGATE_SMTP_URL: url });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).not.toContain('hunter2');
    }
    expect(() =>
      loadConfig({ TOLLGATE_SMTP_URL: 'smtp://secret:pw@mail.example.com', TOLLGATE_SMTP_FROM: 'not an address' }),
    ).toThrow(/TOLLGATE_SMTP_FROM must be an email address/);
    expect(() =>
      loadConfig({ TOLLGATE_SMTP_URL: 'smtp://mail.example.com', TOLLGATE_SMTP_FROM: 'a@example.com\r\nBcc: x@y.z' }),
    ).toThrow(ConfigError);
  });
});

describe('push settings', () => {
  it('take the VAPID subject as given, else the https public URL, else mailto: the From address, else none', () => {
    expect(loadConfig({ TOLLGATE_VAPID_SUBJECT: 'mailto:ops@example.com' }).push.subject).toBe(
      'mailto:ops@example.com',
    );
    expect(loadConfig({ TOLLGATE_PUBLIC_URL: 'https://tg.example.com/' }).push.subject).toBe('https://tg.example.com');
    expect(
      loadConfig({ TOLLGATE_SMTP_URL: 'smtp://mail.example.com', TOLLGATE_SMTP_FROM: 'Tollgate <tg@example.com>' }).push
        .subject,
    ).toBe('mailto:tg@example.com');
    expect(loadConfig({ TOLLGATE_PUBLIC_URL: 'http://localhost:8080' }).push.subject).toBeUndefined();
    expect(() => loadConfig({ TOLLGATE_VAPID_SUBJECT: 'ops@example.com' })).toThrow(/mailto: or https:/);
  });

  it('take a key pair only whole', () => {
    expect(() => loadConfig({ TOLLGATE_VAPID_PUBLIC_KEY: 'BPub' })).toThrow(/both/);
    expect(loadConfig({ TOLLGATE_VAPID_PUBLIC_KEY: 'BPub', TOLLGATE_VAPID_PRIVATE_KEY: 'priv' }).push).toMatchObject({
      publicKey: 'BPub',
      privateKey: 'priv',
    });
  });

  it('reads how old a sign-in may be for push and email to act for a person, a week by default', () => {
    expect(loadConfig({}).personMaxAgeSeconds).toBe(7 * 86_400);
    expect(loadConfig({ TOLLGATE_PERSON_MAX_AGE: '12h' }).personMaxAgeSeconds).toBe(43_200);
  });
});
