import { slackSignature, verifySlackSignature } from './slack-signature';

const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const NOW = 1531420618;
const BODY = Buffer.from('token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&command=%2Fweather&text=94070');

describe('Slack request signatures', () => {
  const good = slackSignature(SECRET, String(NOW), BODY);

  it('are v0= and the hex HMAC-SHA256 of v0:timestamp:body', () => {
    expect(good).toMatch(/^v0=[0-9a-f]{64}$/);
  });

  it('verify for the exact body within five minutes', () => {
    expect(verifySlackSignature(SECRET, { timestamp: String(NOW), signature: good }, BODY, NOW + 299)).toEqual({
      ok: true,
    });
  });

  it.each([
    ['a changed body', { timestamp: String(NOW), signature: good }, Buffer.from(BODY.toString() + '&x=1'), NOW],
    ['another secret', { timestamp: String(NOW), signature: slackSignature('other', String(NOW), BODY) }, BODY, NOW],
    ['a stale timestamp', { timestamp: String(NOW), signature: good }, BODY, NOW + 301],
    ['a timestamp from the future', { timestamp: String(NOW), signature: good }, BODY, NOW - 301],
    ['a timestamp that is not a number', { timestamp: 'soon', signature: good }, BODY, NOW],
    ['a truncated signature', { timestamp: String(NOW), signature: good.slice(0, 20) }, BODY, NOW],
    ['no signature', { timestamp: String(NOW) }, BODY, NOW],
    ['two signatures', { timestamp: String(NOW), signature: [good, good] }, BODY, NOW],
  ])('do not verify with %s', (_label, headers, body, now) => {
    expect(verifySlackSignature(SECRET, headers, body, now).ok).toBe(false);
  });
});
