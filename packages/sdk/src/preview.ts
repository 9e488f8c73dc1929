import { base64url } from 'jose';
import { canonicalJson } from './jcs.js';
import type { PreviewInput } from './types.js';

/**
 * A preview's digest (docs/API.md "Previews"), as the server takes it: SHA-256, base64url without padding, of the RFC 8785 (JCS) form of
 * its members that are given (`digest` and members left undefined are not part of it; key order does not matter;
 * strings are taken as they are, with no Unicode normalisation). Throws TypeError for what is not JSON (a lone
 * surrogate), as the server refuses it.
 */
export async function previewDigest(p: PreviewInput): Promise<string> {
  const email = p.email && Object.fromEntries(Object.entries(p.email).filter(([, v]) => v !== undefined && v !== null));
  const form: Record<string, unknown> = { kind: p.kind, content: p.content };
  if (p.title !== undefined && p.title !== null) form.title = p.title;
  if (p.estimatedRows !== undefined && p.estimatedRows !== null) form.estimatedRows = p.estimatedRows;
  if (email && Object.keys(email).length > 0) form.email = email;
  const bytes = new TextEncoder().encode(canonicalJson(form));
  return base64url.encode(new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes)));
}
