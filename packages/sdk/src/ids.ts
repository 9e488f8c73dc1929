/** What the API accepts as a tool-call or conversation id. */
export const ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

/** A fresh id for a proposal, made once before its first attempt so that retries repeat it. */
export function newId(prefix: string): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return `${prefix}_${c.randomUUID()}`;
  const bytes = c.getRandomValues(new Uint8Array(16)); // randomUUID needs a secure context in browsers
  return `${prefix}_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * A framework's tool-call id as the API's idempotency key: kept as is when the API accepts it, else its
 * SHA-256 (`x_<64 hex>`), so the same framework id always maps to the same key.
 */
export async function toolCallKey(frameworkId: string): Promise<string> {
  if (ID_PATTERN.test(frameworkId)) return frameworkId;
  const digest = new Uint8Array(
    await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(frameworkId)),
  );
  return `x_${Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}
