import { unifiedDiff } from './line-diff';

const labels = { from: 'version 3 (in force)', to: 'policy.yaml' };

describe('unifiedDiff', () => {
  it('answers nothing for equal texts', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n', labels)).toBe('');
  });

  it('prints a changed line with three lines of context, as diff -u does', () => {
    const a = ['1', '2', '3', '4', '5', '6', '7', '8', '9'].join('\n') + '\n';
    const b = a.replace('5\n', 'five\n');
    expect(unifiedDiff(a, b, labels)).toBe(
      [
        '--- version 3 (in force)',
        '+++ policy.yaml',
        '@@ -2,7 +2,7 @@',
        ' 2',
        ' 3',
        ' 4',
        '-5',
        '+five',
        ' 6',
        ' 7',
        ' 8',
        '',
      ].join('\n'),
    );
  });

  it('keeps distant changes in separate hunks, and shows added and removed lines at the ends', () => {
    const a = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n') + '\n';
    const b = `first\n${a.replace('line 19\n', '')}`;
    const out = unifiedDiff(a, b, labels);
    expect(out.match(/^@@/gm)).toHaveLength(2);
    expect(out).toContain('@@ -1,3 +1,4 @@\n+first\n line 0\n');
    expect(out).toContain('@@ -17,4 +18,3 @@\n line 16\n');
    expect(out).toMatch(/-line 19\n$/);
  });
});
