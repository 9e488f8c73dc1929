/** The lifetimes an “always allow” may be given from a card, in seconds; `null` is until revoked. */
export const GRANT_LIFETIMES: ReadonlyArray<[number | null, string]> = [
  [3600, '1 hour'],
  [86400, '1 day'],
  [7 * 86400, '7 days'],
  [null, 'until revoked'],
];

/** The lifetime chosen by default: a day, so a grant made in a hurry does not stay forever. */
export const DEFAULT_GRANT_LIFETIME: number | null = 86400;

/** The always-allow form's expiry: a standing grant ends after this, or stays until someone revokes it. */
export function GrantExpiry({ value, onChange }: { value: number | null; onChange(v: number | null): void }) {
  return (
    <p class="expiry">
      <label for="grant-expiry">Ends</label>{' '}
      <select
        id="grant-expiry"
        data-testid="grant-expiry"
        value={value === null ? 'never' : String(value)}
        onChange={(e) => {
          const v = (e.target as HTMLSelectElement).value;
          onChange(v === 'never' ? null : Number(v));
        }}
      >
        {GRANT_LIFETIMES.map(([seconds, label]) => (
          <option key={label} value={seconds === null ? 'never' : String(seconds)}>
            {seconds === null ? label : `after ${label}`}
          </option>
        ))}
      </select>
    </p>
  );
}
