/** Plain-text output for people; `--json` output for scripts is the API's JSON as is. */
import { spanSeconds } from '../../../infrastructure/config/duration';
import { oneLineText, safeJson } from '../safe-text';

export function table(headers: string[], rows: string[][], maxWidths: number[] = []): string {
  const clip = (s: string, i: number) => {
    const max = maxWidths[i];
    const one = oneLineText(s.replace(/\s+/g, ' '));
    return max && one.length > max ? `${one.slice(0, max - 1)}…` : one;
  };
  const cells = rows.map((r) => r.map(clip));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n');
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** "4m 10s left", "expired". */
export function timeLeft(expiresAt: string | undefined, now = Date.now()): string {
  if (!expiresAt) return '';
  const s = Math.round((Date.parse(expiresAt) - now) / 1000);
  if (s <= 0) return 'expiring';
  if (s < 60) return `${s}s left`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s left`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m left`;
}

/** `2024-05-01T10:00:00Z`, or a span back from now: `90s`, `30m`, `8h`, `7d`. */
export function parseWhen(raw: string, now = Date.now()): string {
  const span = spanSeconds(raw);
  if (span !== undefined) return new Date(now - span * 1000).toISOString();
  const t = Date.parse(raw);
  if (Number.isNaN(t))
    throw new Error(`"${raw}" is neither a date (2024-05-01, 2024-05-01T10:00:00Z) nor a span such as 30m, 8h, 7d`);
  return new Date(t).toISOString();
}

/** A value on one line for a terminal: a string cleaned of control characters, anything else as safe JSON. */
export function oneLine(v: unknown, max = 80): string {
  const s = typeof v === 'string' ? oneLineText(v) : safeJson(v);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
