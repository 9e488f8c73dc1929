/*
 * Secret arguments on a card (issue 28 part 1): the server masks them as "[redacted:hmac-<12 hex>]" everywhere but
 * the claim. The JSON above shows the marker as is; this line names each masked place as a chip, "secret • digest",
 * so a masked value reads as deliberate, and equal digests show the same secret.
 */

const MARKER = /^\[redacted:hmac-([0-9a-f]{12})\]$/;

export interface MaskedValue {
  path: string;
  digest: string;
}

/** Every masked value of the arguments, with its dotted path (array elements as [i]). */
export function maskedValues(value: unknown, path = ''): MaskedValue[] {
  if (typeof value === 'string') {
    const m = MARKER.exec(value);
    return m ? [{ path: path || '(arguments)', digest: m[1] }] : [];
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => maskedValues(v, `${path}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => maskedValues(v, path ? `${path}.${k}` : k));
  return [];
}

export function Secrets({ args }: { args: Record<string, unknown> }) {
  const masked = maskedValues(args);
  if (masked.length === 0) return null;
  return (
    <p class="secrets muted" data-testid="secrets">
      Secret values are masked:{' '}
      {masked.map((m) => (
        <span class="secret-chip" key={m.path} title={`${m.path}: masked secret, digest ${m.digest}`}>
          <code>{m.path}</code> secret • {m.digest}
        </span>
      ))}
    </p>
  );
}
