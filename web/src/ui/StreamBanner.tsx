import { clock, duration } from '../format';
import type { StreamStatus } from '../sse';

interface Props {
  stream: StreamStatus;
  /** When the page last knew the list to be current: the last word from the stream or the last snapshot (local ms). */
  syncedAt?: number;
  now: number;
  onRetry(): void;
}

/**
 * Shown from the moment the live stream drops until it is back and the list has been read again: the cards
 * below may be out of date meanwhile, and the person should not decide from them without knowing it.
 */
export function StreamBanner({ stream, syncedAt, now, onRetry }: Props) {
  const waiting = stream.state === 'reconnecting' && stream.retryAt !== undefined && stream.retryAt > now;
  const next =
    stream.state === 'live'
      ? 'Connected again — bringing the list up to date…'
      : waiting
        ? `Reconnecting in ${duration(stream.retryAt! - now)}…`
        : 'Reconnecting…';
  return (
    <div class="stale" data-testid="stream-banner">
      {/* The sentence stays put during an outage, so the live region speaks once; the countdown is outside it. */}
      <p role="status">
        <strong>Live updates are disconnected.</strong> The requests below may be out of date
        {syncedAt !== undefined ? ` (last synced at ${clock(new Date(syncedAt).toISOString(), now)})` : ''}: a request
        may have been decided, or a new one may be waiting.
      </p>
      <p class="stale-next">
        <span>{next}</span>
        <button type="button" onClick={onRetry}>
          Retry now
        </button>
      </p>
    </div>
  );
}
