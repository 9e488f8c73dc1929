/*
 * What a proposal says its call will do, in a form a person can judge: a diff, an SQL statement with its estimated
 * rows, an email as it will look, plain text, or an image. Agent-supplied and untrusted: every channel escapes it.
 * Its digest (SHA-256, base64url, of the RFC 8785 form of everything but the digest) is taken when it is proposed,
 * recorded in the decision, and signed into the receipt (`preview` claim), so a backend can refuse a run whose
 * preview differs from what it is about to do.
 */

export const PREVIEW_KINDS = ['diff', 'sql', 'email', 'text', 'image'] as const;
export type PreviewKind = (typeof PREVIEW_KINDS)[number];

/** The most text a preview's `content` holds (UTF-16 code units); an image's data URL may hold more. */
export const MAX_PREVIEW_TEXT = 64 * 1024;
/** The most bytes an image preview's decoded data holds. */
export const MAX_PREVIEW_IMAGE_BYTES = 256 * 1024;
export const MAX_PREVIEW_TITLE = 200;
export const MAX_PREVIEW_HEADER = 1000;

/** An email preview's headers; its `content` is the body as text. */
export interface PreviewEmailHeaders {
  from?: string;
  to?: string;
  cc?: string;
  subject?: string;
}

/** A preview as proposed, before its digest. */
export interface PreviewInput {
  kind: PreviewKind;
  content: string;
  title?: string;
  /** `sql` only: the rows the statement is expected to touch. */
  estimatedRows?: number;
  /** `email` only. */
  email?: PreviewEmailHeaders;
}

/** A preview as kept on the call: what was proposed, and its digest. */
export interface CallPreview extends PreviewInput {
  digest: string;
}

/**
 * The object the digest is taken over: the preview's members that were given, nothing else (no digest, no
 * empty members), so the agent's key order and the server's storage change nothing. Strings are kept as given:
 * no Unicode normalisation (what is shown is what is bound).
 */
export function previewDigestInput(p: PreviewInput): Record<string, unknown> {
  const email = p.email && Object.fromEntries(Object.entries(p.email).filter(([, v]) => v !== undefined));
  return {
    kind: p.kind,
    content: p.content,
    ...(p.title !== undefined ? { title: p.title } : {}),
    ...(p.estimatedRows !== undefined ? { estimatedRows: p.estimatedRows } : {}),
    ...(email && Object.keys(email).length > 0 ? { email } : {}),
  };
}

/** The first `max` characters of a text, without splitting a surrogate pair, and whether it was cut. */
export function truncatePreview(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return { text: text.slice(0, end), cut: true };
}

/** A short plain-text form of a preview for channels that show text (chat, CLI, Slack), cut at `max` characters. */
export function previewAsText(p: CallPreview, max: number): { text: string; cut: boolean } {
  if (p.kind === 'image') return { text: `[image${p.title ? `: ${p.title}` : ''}]`, cut: false };
  const head: string[] = [];
  if (p.kind === 'email' && p.email) {
    for (const k of ['from', 'to', 'cc', 'subject'] as const) {
      const v = p.email[k];
      if (v !== undefined) head.push(`${k[0].toUpperCase()}${k.slice(1)}: ${v}`);
    }
    head.push('');
  }
  if (p.kind === 'sql' && p.estimatedRows !== undefined) head.push(`-- estimated rows: ${p.estimatedRows}`);
  return truncatePreview([...head, p.content].join('\n'), max);
}
