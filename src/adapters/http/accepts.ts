/**
 * Which of `offered` (in the server's order of preference) the request's Accept header prefers, or undefined
 * when it takes none; the first when there is no Accept header. As Express's `req.accepts` chose: each offered
 * type takes the most specific media range that matches it (then its q), and the types are ranked by q, then
 * that range's specificity, then its place in the header, then their own order.
 */
export function preferredType(accept: string | string[] | undefined, offered: readonly string[]): string | undefined {
  if (accept === undefined) return offered[0];
  const ranges = (Array.isArray(accept) ? accept.join(',') : accept)
    .split(',')
    .map((part, at) => {
      const [range, ...params] = part.split(';').map((s) => s.trim());
      const [type, subtype] = range.toLowerCase().split('/');
      const q = params.map((p) => /^q=([\d.]+)$/i.exec(p)).find((m) => m);
      return { type, subtype, q: q ? Number(q[1]) : 1, at };
    })
    .filter((r) => r.type && r.subtype);
  const ranked = offered
    .map((t, i) => {
      const [type, subtype] = t.toLowerCase().split('/');
      let best: { q: number; s: number; at: number } | undefined;
      for (const r of ranges) {
        const s = r.type === type ? (r.subtype === subtype ? 2 : r.subtype === '*' ? 1 : -1) : r.type === '*' ? 0 : -1;
        if (s < 0 || (r.type === '*' && r.subtype !== '*')) continue;
        if (!best || s > best.s || (s === best.s && (r.q > best.q || (r.q === best.q && r.at < best.at))))
          best = { q: r.q, s, at: r.at };
      }
      return { t, i, ...(best ?? { q: 0, s: -1, at: Infinity }) };
    })
    .filter((c) => c.q > 0)
    .sort((a, b) => b.q - a.q || b.s - a.s || a.at - b.at || a.i - b.i);
  return ranked[0]?.t;
}
