import { ConfigError, loadConfig, parseSlackApprovers } from './config';
import { slackLinkIn, slackRoutes } from './slack-config';

describe('Slack configuration', () => {
  it('is off unless configured', () => {
    expect(loadConfig({}).slack).toBeUndefined();
  });

  it('needs the token, the signing secret and the channel together', () => {
    expect(() => loadConfig({ SLACK_BOT_TOKEN: 'xoxb-1' })).toThrow(/missing: SLACK_SIGNING_SECRET, SLACK_CHANNEL/);
  });

  it('reads the linked people, the tenant and the API URL', () => {
    const c = loadConfig({
      SLACK_BOT_TOKEN: 'xoxb-1',
      SLACK_SIGNING_SECRET: 's',
      SLACK_CHANNEL: 'C1',
      SLACK_API_URL: 'http://127.0.0.1:1/api',
      TOLLGATE_SLACK_APPROVERS: 'U777=ann, U888=bob,U777=ann',
    });
    expect(c.slack).toEqual({
      botToken: 'xoxb-1',
      signingSecret: 's',
      channel: 'C1',
      apiUrl: 'http://127.0.0.1:1/api/',
      tenant: 'default',
      people: { U777: 'ann', U888: 'bob' },
      personMaxAgeSeconds: 604_800,
    });
  });

  it('reads how old a sign-in may be to decide in Slack: seconds or a span, a week by default, bounded', () => {
    const slack = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's', SLACK_CHANNEL: 'C1' };
    expect(loadConfig({ ...slack, TOLLGATE_PERSON_MAX_AGE: '86400' }).slack?.personMaxAgeSeconds).toBe(86_400);
    expect(loadConfig({ ...slack, TOLLGATE_PERSON_MAX_AGE: '12h' }).slack?.personMaxAgeSeconds).toBe(43_200);
    expect(loadConfig({ ...slack, TOLLGATE_PERSON_MAX_AGE: '' }).slack?.personMaxAgeSeconds).toBe(604_800);
    for (const bad of ['0', '599', '-1', '367d', 'forever', '7 days'])
      expect(() => loadConfig({ ...slack, TOLLGATE_PERSON_MAX_AGE: bad })).toThrow(/TOLLGATE_PERSON_MAX_AGE/);
  });

  it('takes a person id as the token spells its sub', () => {
    expect(parseSlackApprovers('U9=auth0|5f1c.ann@example.com')).toEqual({ U9: 'auth0|5f1c.ann@example.com' });
  });

  it('refuses the old <user>:<role> form, saying the new form and why', () => {
    expect(() => parseSlackApprovers('U777:admin')).toThrow(ConfigError);
    expect(() => parseSlackApprovers('U777:admin')).toThrow(/U777=<person id>/);
    expect(() => parseSlackApprovers('U777:admin')).toThrow(/roles come from their person record/);
  });

  it("suggests no one else's person id for an old entry beside a new one", () => {
    expect(() => parseSlackApprovers('U123=ann,U456:admin')).toThrow(/e\.g\. U456=<person id>$/);
  });

  it('refuses a Slack user linked to two people', () => {
    expect(() => parseSlackApprovers('U1=ann,U1=bob')).toThrow(/one person/);
  });

  it.each(['U1', 'U1=', '=ann', 'u 1=ann', 'U1=a b', `U1=${'x'.repeat(256)}`, `${'U'.repeat(33)}=ann`])(
    'refuses "%s"',
    (raw) => {
      expect(() => parseSlackApprovers(raw)).toThrow(ConfigError);
    },
  );
});

describe('webhook delivery configuration', () => {
  it('has defaults and reads overrides', () => {
    expect(loadConfig({}).webhooks).toEqual({
      retryBaseMs: 5000,
      maxAttempts: 10,
      timeoutMs: 10_000,
      allowPrivate: [],
    });
    expect(
      loadConfig({
        TOLLGATE_WEBHOOK_RETRY_BASE_MS: '100',
        TOLLGATE_WEBHOOK_MAX_ATTEMPTS: '3',
        TOLLGATE_WEBHOOK_TIMEOUT_MS: '500',
        TOLLGATE_WEBHOOK_ALLOW_PRIVATE: '10.0.0.0/8, fd00::/8',
      }).webhooks,
    ).toEqual({ retryBaseMs: 100, maxAttempts: 3, timeoutMs: 500, allowPrivate: ['10.0.0.0/8', 'fd00::/8'] });
  });
});

describe('hardening settings', () => {
  it('reads the webhook allowlist: empty by default, true for everything, CIDRs checked', () => {
    expect(loadConfig({ TOLLGATE_WEBHOOK_ALLOW_PRIVATE: 'true' }).webhooks.allowPrivate).toEqual(['0.0.0.0/0', '::/0']);
    expect(loadConfig({ TOLLGATE_WEBHOOK_ALLOW_PRIVATE: 'false' }).webhooks.allowPrivate).toEqual([]);
    for (const bad of ['10.0.0.0', '10.0.0.0/33', 'fd00::/129', 'example.com/8', 'yes']) {
      expect(() => loadConfig({ TOLLGATE_WEBHOOK_ALLOW_PRIVATE: bad })).toThrow(ConfigError);
    }
  });

  it('reads the token lifetime cap as seconds or with a unit, 24 h by default', () => {
    expect(loadConfig({}).auth.maxTtlSeconds).toBe(86_400);
    expect(loadConfig({ TOLLGATE_JWT_MAX_TTL: '3600' }).auth.maxTtlSeconds).toBe(3600);
    expect(loadConfig({ TOLLGATE_JWT_MAX_TTL: '90m' }).auth.maxTtlSeconds).toBe(5400);
    expect(loadConfig({ TOLLGATE_JWT_MAX_TTL: '7d' }).auth.maxTtlSeconds).toBe(604_800);
    for (const bad of ['0', '-1', '1w', '24 h', 'forever'])
      expect(() => loadConfig({ TOLLGATE_JWT_MAX_TTL: bad })).toThrow(ConfigError);
  });

  it('has bounded defaults for waits, failed authentication and stream buffers', () => {
    const c = loadConfig({});
    expect({ tenant: c.maxWaitsPerTenant, failures: c.authFailuresPer10s, buffer: c.streamMaxBufferBytes }).toEqual({
      tenant: 1000,
      failures: 50,
      buffer: 4 * 1024 * 1024,
    });
  });
});

describe('one Slack app for several tenants', () => {
  const app = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's' };

  it('reads a channel per tenant instead of SLACK_CHANNEL, and links that name their tenant', () => {
    const c = loadConfig({
      ...app,
      TOLLGATE_SLACK_TENANTS: 'acme=C0ACME, globex=#globex-approvals',
      TOLLGATE_SLACK_APPROVERS: 'acme:U1=ann,acme:U2=bob,globex:U2=robert',
    }).slack!;
    expect(c.routes).toEqual({ acme: 'C0ACME', globex: '#globex-approvals' });
    expect([c.tenant, c.channel]).toEqual(['acme', 'C0ACME']);
    expect(slackLinkIn(c, 'acme', 'U2')).toBe('bob');
    expect(slackLinkIn(c, 'globex', 'U2')).toBe('robert');
    expect(slackLinkIn(c, 'globex', 'U1')).toBeUndefined();
    expect(slackLinkIn(c, 'acme', 'U1')).toBe('ann');
    expect(slackLinkIn(c, 'globex', 'U3')).toBeUndefined();
    expect(slackRoutes(loadConfig({ ...app, SLACK_CHANNEL: 'C1', TOLLGATE_SLACK_TENANT: 't' }).slack!)).toEqual({
      t: 'C1',
    });
  });

  it('refuses a tenant or a channel named twice, both forms at once, a link for a tenant not served, and bad entries', () => {
    const bad: Array<[Record<string, string>, RegExp]> = [
      [{ TOLLGATE_SLACK_TENANTS: 'acme=C1,acme=C2' }, /tenant "acme" twice/],
      [{ TOLLGATE_SLACK_TENANTS: 'acme=C1,globex=C1' }, /channel C1 is given to "acme" and "globex"/],
      [{ TOLLGATE_SLACK_TENANTS: 'acme=C1', SLACK_CHANNEL: 'C9' }, /not both/],
      [{ TOLLGATE_SLACK_TENANTS: 'acme=C1', TOLLGATE_SLACK_APPROVERS: 'initech:U1=ann' }, /tenant "initech"/],
      [{ TOLLGATE_SLACK_TENANTS: 'acme' }, /not <tenant>=<channel/],
      [{ TOLLGATE_SLACK_TENANTS: 'acme=C1', TOLLGATE_SLACK_APPROVERS: 'U1=ann' }, /each link names its tenant/],
      [{ TOLLGATE_SLACK_TENANTS: 'acme=general channel' }, /not <tenant>=<channel/],
      [{ SLACK_CHANNEL: 'C1', TOLLGATE_SLACK_APPROVERS: 'acme:U1=ann' }, /needs TOLLGATE_SLACK_TENANTS|tenant "acme"/],
    ];
    for (const [env, message] of bad) expect(() => loadConfig({ ...app, ...env })).toThrow(message);
  });
});
