import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * A newcomer reads the README and docs/ from a fresh clone: every relative link must reach a file of the clone,
 * every #anchor a heading, and no text may send them to something a clone does not hold.
 */
const ROOT = join(__dirname, '..', '..');
const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  cwd: ROOT,
  encoding: 'utf8',
})
  .split('\n')
  .filter(Boolean);
const DOCS = tracked.filter((f) => /^(README|CHANGELOG)\.md$|^docs\/.+\.md$|^packages\/sdk\/README\.md$/.test(f));

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

/** Links outside code: `[text](target)` and `<img src="…">`. */
export function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  const links = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  return [...links, ...[...prose.matchAll(/<img[^>]*\ssrc="([^"]+)"/g)].map((m) => m[1])];
}

describe('the README and docs/', () => {
  it('are found', () => {
    expect(DOCS).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', 'docs/API.md', 'docs/OPERATIONS.md']));
  });

  it.each(DOCS)('%s links only to files and headings of the clone', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const broken: string[] = [];
    for (const link of linksOf(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // http(s), mailto: outside the clone
      const [path, anchor] = link.split('#');
      const target = path ? resolve(dirname(join(ROOT, file)), decodeURIComponent(path)) : join(ROOT, file);
      const rel = relative(ROOT, target);
      if (
        rel.startsWith('..') ||
        !existsSync(target) ||
        !(tracked.includes(rel) || tracked.some((f) => f.startsWith(`${rel}/`)))
      ) {
        broken.push(`${link} (no ${rel} in the clone)`);
        continue;
      }
      if (anchor && /\.md$/.test(target) && !anchorsOf(readFileSync(target, 'utf8')).has(anchor))
        broken.push(`${link} (no heading #${anchor})`);
    }
    expect(broken).toEqual([]);
  });

  it.each(DOCS)('%s names nothing a reader of the clone cannot follow', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const unfollowable = [
      /\.\.\/shared\//,
      /CONTRACT(\.md)?\s*§/,
      /\bCONTRACT\.md\b/,
      /\bissue \d+\b/i,
      /\bADR[- ]\d+/,
      /\bthe seeds\b/i,
    ];
    expect(unfollowable.filter((re) => re.test(text)).map(String)).toEqual([]);
  });
});

describe('anchorsOf', () => {
  it('follows GitHub: punctuation dropped, code and repeats handled', () => {
    expect([
      ...anchorsOf(
        '# A tour with curl\n## `tollgate inbox`\n## Errors & codes\n```\n# not a heading\n```\n## Errors & codes',
      ),
    ]).toEqual(['a-tour-with-curl', 'tollgate-inbox', 'errors--codes', 'errors--codes-1']);
  });
});
