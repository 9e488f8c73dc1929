import { ConfigError, loadConfig, parseSlackApprovers } from './config';

describe('Slack configuration', () => {
  it('is off unless configured', () => {
    expect(loadConfig({}).slack).toBeUndefined();
  });

  it('needs the token, the signing secret and the channel together', () => {
    expect(() => loadConfig({ SLACK_BOT_TOKEN: 'xoxb-1' })).toThrow(/missing: SLACK_SIGNING_SECRET, SLACK_CHANNEL/);
  });

  it('reads the approvers, the tenant and the API URL', () => {
    const c = loadConfig({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's', SLACK_CHANNEL: 'C1', SLACK_API_URL: 'http://127.0.0.1:1/api', TOLLGATE_SLACK_APPROVERS: 'U1:approver, U2:admin,U1:auditor' });
    expect(c.slack).toEqual({ botToken: 'xoxb-1', signingSecret: 's', channel: 'C1', apiUrl: 'http://127.0.0.1:1/api/', tenant: 'default', approvers: { U1: ['approver', 'auditor'], U2: ['admin'] } });
  });

  it('maps a user to several roles with +', () => {
    expect(parseSlackApprovers('U9:approver+admin')).toEqual({ U9: ['approver', 'admin'] });
  });

  it.each(['U1', 'U1:', 'u 1:approver', 'U1:agent'])('refuses "%s"', (raw) => {
    expect(() => parseSlackApprovers(raw)).toThrow(ConfigError);
  });
});

describe('webhook delivery configuration', () => {
  it('has defaults and reads overrides', () => {
    expect(loadConfig({}).webhooks).toEqual({ retryBaseMs: 5000, maxAttempts: 10, timeoutMs: 10_000 });
    expect(loadConfig({ TOLLGATE_WEBHOOK_RETRY_BASE_MS: '100', TOLLGATE_WEBHOOK_MAX_ATTEMPTS: '3', TOLLGATE_WEBHOOK_TIMEOUT_MS: '500' }).webhooks).toEqual({ retryBaseMs: 100, maxAttempts: 3, timeoutMs: 500 });
  });
});
