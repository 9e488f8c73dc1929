/**
 * A unified line diff (as `diff -u` prints it, 3 lines of context) for `tollgate policy diff`. Policies are
 * short, so a plain longest-common-subsequence table over the lines between the common head and tail is
 * enough; past a size where that table would be large, the middle is shown as removed then added.
 */
const CONTEXT = 3;
const MAX_TABLE_CELLS = 4_000_000;

type Op = { kind: ' ' | '-' | '+'; line: string };

export function unifiedDiff(a: string, b: string, labels: { from: string; to: string }): string {
  if (a === b) return '';
  const ops = lineOps(split(a), split(b));
  const out = [`--- ${labels.from}`, `+++ ${labels.to}`];
  // Hunks: runs of changes with CONTEXT lines around them, merged when their contexts touch.
  const changed = ops.map((o, i) => (o.kind === ' ' ? -1 : i)).filter((i) => i >= 0);
  let i = 0;
  while (i < changed.length) {
    const start = Math.max(0, changed[i] - CONTEXT);
    let end = changed[i];
    while (i + 1 < changed.length && changed[i + 1] - end <= 2 * CONTEXT + 1) end = changed[++i];
    i++;
    const stop = Math.min(ops.length, end + CONTEXT + 1);
    const before = ops.slice(0, start);
    const hunk = ops.slice(start, stop);
    const aStart = before.filter((o) => o.kind !== '+').length;
    const bStart = before.filter((o) => o.kind !== '-').length;
    const aLen = hunk.filter((o) => o.kind !== '+').length;
    const bLen = hunk.filter((o) => o.kind !== '-').length;
    out.push(`@@ -${range(aStart, aLen)} +${range(bStart, bLen)} @@`, ...hunk.map((o) => `${o.kind}${o.line}`));
  }
  return `${out.join('\n')}\n`;
}

function split(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function range(start: number, len: number): string {
  return len === 0 ? `${start},0` : len === 1 ? `${start + 1}` : `${start + 1},${len}`;
}

function lineOps(a: string[], b: string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const am = a.slice(head, a.length - tail);
  const bm = b.slice(head, b.length - tail);
  const same = (lines: string[]) => lines.map((line): Op => ({ kind: ' ', line }));
  return [...same(a.slice(0, head)), ...middle(am, bm), ...same(a.slice(a.length - tail))];
}

function middle(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  if (n * m > MAX_TABLE_CELLS)
    return [...a.map((line): Op => ({ kind: '-', line })), ...b.map((line): Op => ({ kind: '+', line }))];
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--)
      lcs[i * w + j] =
        a[i] === b[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ kind: ' ', line: a[i++] });
      j++;
    } else if (lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) ops.push({ kind: '-', line: a[i++] });
    else ops.push({ kind: '+', line: b[j++] });
  }
  while (i < n) ops.push({ kind: '-', line: a[i++] });
  while (j < m) ops.push({ kind: '+', line: b[j++] });
  return ops;
}
