import { wrapItems, wrapWords } from './inbox';

describe('the inbox wraps its footer to the terminal', () => {
  const keys = ['↑/↓ move', 'enter details', 'a approve', 'A always allow', 'r reject', 'e edit arguments', 'q quit'];

  it('breaks the key help between keys, never inside one, each line within the width', () => {
    const lines = wrapItems(keys, 40);
    expect(lines).toEqual([
      '↑/↓ move · enter details · a approve',
      'A always allow · r reject',
      'e edit arguments · q quit',
    ]);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(40);
  });

  it('keeps it on one line when it fits', () => {
    expect(wrapItems(keys, 200)).toEqual([keys.join(' · ')]);
  });

  it('breaks a styled line between words, counting only the visible characters, and keeps a leading indent', () => {
    const bold = (s: string) => `\x1b[1m${s}\x1b[22m`;
    expect(wrapWords(`Approve ${bold('send_email')}? ${bold('y')} to confirm`, 20)).toEqual([
      `Approve ${bold('send_email')}?`,
      `${bold('y')} to confirm`,
    ]);
    expect(wrapWords('  or open the card', 12)).toEqual(['  or open', 'the card']);
  });

  it('leaves a word longer than the line whole, for the screen to cut', () => {
    expect(wrapWords('see http://127.0.0.1:8080/c/tc_0123456789', 20)).toEqual([
      'see',
      'http://127.0.0.1:8080/c/tc_0123456789',
    ]);
  });
});
