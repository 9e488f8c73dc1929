/** The web card's chips for secret arguments: which places of the arguments are masked, and their digests. */
import { maskedValues } from '../../web/src/secrets';

describe('maskedValues', () => {
  it('names every masked value by its path, arrays by index, and nothing else', () => {
    expect(
      maskedValues({
        password: '[redacted:hmac-3f9a0c1b2d4e]',
        headers: { Authorization: '[redacted:hmac-000000000001]', accept: 'json' },
        items: [{ token: '[redacted:hmac-00000000000a]' }, { token: 'not a marker' }],
        note: '[redacted:hmac-short]',
      }),
    ).toEqual([
      { path: 'password', digest: '3f9a0c1b2d4e' },
      { path: 'headers.Authorization', digest: '000000000001' },
      { path: 'items[0].token', digest: '00000000000a' },
    ]);
  });

  it('finds none in arguments without markers', () => {
    expect(maskedValues({ a: 1, b: ['x', { c: null }] })).toEqual([]);
  });
});
