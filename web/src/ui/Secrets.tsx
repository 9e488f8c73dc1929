/*
 * Secret arguments on a card (issue 28 part 1): the server masks them as "[redacted:hmac-<12 hex>]" everywhere but
 * the claim. The JSON above shows the marker as is; this line names each masked place as a chip, "secret • digest",
 * so a masked value reads as deliberate, and equal digests show the same secret.
 */

import { maskedValues } from '../secrets';

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
