import { ValidationError } from '../../domain/shared/domain-error';

/** A page's last key: (created_at or another sort column, id). */
export type CursorKey = [string, string];

/** Keyset cursors: stable under inserts, cheap at any depth. Opaque to clients. */
export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/**
 * The key a cursor of ours holds, null for none; anything else is a 400 on `cursor`. `dated`: its first part must
 * be an instant (it is compared with a timestamp column).
 */
export function decodeCursor(cursor: string | undefined, o: { dated?: boolean } = {}): CursorKey | null {
  if (!cursor) return null;
  try {
    const k = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(k) &&
      k.length === 2 &&
      typeof k[0] === 'string' &&
      typeof k[1] === 'string' &&
      (!o.dated || !Number.isNaN(Date.parse(k[0])))
    )
      return k as CursorKey;
  } catch {
    /* fall through */
  }
  throw new ValidationError([{ path: 'cursor', message: 'is not a cursor this server issued' }]);
}
