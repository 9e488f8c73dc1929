import { base64url } from 'jose';
import { canonicalJson } from './jcs.js';

/** What a preview shows: a unified diff, an SQL statement, an email, plain text, or an image (a data: URL). */
export type PreviewKind = 'diff' | 'sql' | 'email' | 'text' | 'image';

/**
 * A proposal's preview (docs/API.md "Previews"): what the call will do, as a person should see it. Its digest is
 * bound to the decision and the receipt's `preview` claim; a backend passes the preview of what it is about to do
 * to verifyReceipt, which refuses the receipt when the two differ.
 */
export interface Preview {
  kind: PreviewKind;
  /** The text (at most 64 KiB), or for `image` a data: URL of PNG, JPEG or WebP (at most 256 KiB). */
  content: string;
  /** At most 200 characters. */
  title?: string;
  /** `sql` only: the rows the statement is expected to touch. */
  estimatedRows?: number;
  /** `email` only: its headers; `content` is the body. */
  email?: { from?: string; to?: string; cc?: string; subject?: string };
}

/**
 * The preview's digest, as the server takes it: SHA-256, base64url without padding, of the RFC 8785 (JCS) form of
 * its members that are given (`digest` and members left undefined are not part of it; key order does not matter;
 * strings are taken as they are, with no Unicode normalisation). Throws TypeError for what is not JSON (a lone
 * surrogate), as the server refuses it.
 */
export async function previewDigest(p: Preview): Promise<string> {
  const email = p.email && Object.fromEntries(Object.entries(p.email).filter(([, v]) => v !== undefined && v !== null));
  const form: Record<string, unknown> = { kind: p.kind, content: p.content };
  if (p.title !== undefined && p.title !== null) form.title = p.title;
  if (p.estimatedRows !== undefined && p.estimatedRows !== null) form.estimatedRows = p.estimatedRows;
  if (email && Object.keys(email).length > 0) form.email = email;
  const bytes = new TextEncoder().encode(canonicalJson(form));
  return base64url.encode(new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes)));
}
