/** Seconds per unit of the spans people type: in the CLI (`--since 8h`, `--ttl 30m`) and in settings (`24h`). */
export const SPAN_UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 } as const;

/**
 * Seconds in a span such as `90s`, `30m`, `8h`, `7d` or `2w`; a bare number is seconds where `bare` allows it.
 * Undefined when the text is no such span.
 */
export function spanSeconds(raw: string, opts: { bare?: boolean } = {}): number | undefined {
  const m = (opts.bare ? /^(\d+)\s*(s|m|h|d|w)?$/ : /^(\d+)\s*(s|m|h|d|w)$/).exec(raw.trim());
  return m ? Number(m[1]) * SPAN_UNIT_SECONDS[(m[2] ?? 's') as keyof typeof SPAN_UNIT_SECONDS] : undefined;
}
