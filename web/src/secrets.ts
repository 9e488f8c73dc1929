/* Secret arguments as the server masks them ("[redacted:hmac-<12 hex>]"): where they are in a call's arguments. */

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
