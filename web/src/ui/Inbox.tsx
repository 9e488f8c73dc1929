import { clock, timeLeft } from '../format';
import type { Departure, InboxState } from '../inbox';
import { titleOf } from '../inbox';
import type { Approval } from '../types';
import { hrefFor } from './hooks';
import { needsPasskey } from '../passkeys';

/** What a shortcut on the list has to say: why it did nothing, or that it failed. */
export interface ListNote {
  text: string;
  error?: boolean;
}

interface Props {
  inbox: InboxState;
  loaded: boolean;
  error?: string;
  note?: ListNote;
  selected: string | null;
  now: number;
  /** When each call appeared live (local ms): fresh rows are highlighted for a moment. */
  arrivedAt: ReadonlyMap<string, number>;
  isDestructive(call: Approval): boolean;
  onSelect(id: string): void;
}

const FRESH_MS = 5000;

/** The queue: pending requests the person may decide, oldest first, and what recently left it. */
export function Inbox({ inbox, loaded, error, note, selected, now, arrivedAt, isDestructive, onSelect }: Props) {
  const pending = inbox.items.filter((i) => !inbox.gone.has(i.id));
  return (
    <section class="inbox" aria-labelledby="inbox-h">
      <div class="inbox-head">
        <h1 id="inbox-h">
          Waiting for you{' '}
          <span class="count" data-testid="pending-count">
            {pending.length}
          </span>
        </h1>
        <p class="muted">
          Requests from AI agents that you may decide (by your roles, or because the policy names you), oldest first.
          New ones appear here by themselves.
        </p>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {note && (
        <p class={note.error ? 'error' : 'notice'} role={note.error ? 'alert' : 'status'} data-testid="list-note">
          {note.text}
        </p>
      )}
      {!loaded && !error && <p class="muted">Loading…</p>}
      {loaded && inbox.items.length === 0 && (
        <div class="empty" data-testid="empty">
          <p>
            <strong>Nothing is waiting for you.</strong>
          </p>
          <p class="muted">Keep this tab open: new requests show up here the moment an agent asks.</p>
        </div>
      )}
      {inbox.items.length > 0 && (
        <ul class="queue" aria-label="Pending requests">
          {inbox.items.map((call) => (
            <Row
              key={call.id}
              call={call}
              departure={inbox.gone.get(call.id)}
              selected={call.id === selected}
              fresh={now - (arrivedAt.get(call.id) ?? -Infinity) < FRESH_MS}
              destructive={isDestructive(call)}
              now={now}
              onSelect={onSelect}
            />
          ))}
        </ul>
      )}
      {inbox.recent.length > 0 && (
        <section class="recent" aria-labelledby="recent-h">
          <h2 id="recent-h">Recently decided</h2>
          <ul data-testid="recent">
            {inbox.recent.map((d) => (
              <li key={`${d.outcome === 'notified' ? 'fyi' : 'left'}-${d.id}`} data-outcome={d.outcome}>
                <a href={hrefFor({ view: 'call', id: d.id })}>{d.title}</a>{' '}
                <span class={`outcome ${d.outcome}`}>{d.note}</span>{' '}
                <time class="muted">{clock(new Date(d.at).toISOString(), now)}</time>
              </li>
            ))}
          </ul>
        </section>
      )}
    </section>
  );
}

function Row({
  call,
  departure,
  selected,
  fresh,
  destructive,
  now,
  onSelect,
}: {
  call: Approval;
  departure?: Departure;
  selected: boolean;
  fresh: boolean;
  destructive: boolean;
  now: number;
  onSelect(id: string): void;
}) {
  const conv = call.conversation;
  const user = conv.user ? (conv.user.name ?? conv.user.id) : null;
  const left = call.approval ? Date.parse(call.approval.expiresAt) - now : Infinity;
  const classes = [
    'row',
    selected && 'selected',
    fresh && 'fresh',
    departure && `left ${departure.outcome}`,
    !departure && left < 60_000 && 'urgent',
  ]
    .filter(Boolean)
    .join(' ');
  return (
    <li class={classes} data-call-id={call.id}>
      <a
        class="row-main"
        href={hrefFor({ view: 'call', id: call.id })}
        tabIndex={selected ? 0 : -1}
        aria-current={selected ? 'true' : undefined}
        aria-disabled={departure ? 'true' : undefined}
        onFocus={() => onSelect(call.id)}
        onClick={(e) => departure && e.preventDefault()}
      >
        <span class="row-title">
          {titleOf(call)}
          {titleOf(call) !== call.toolName && <code class="tool">{call.toolName}</code>}
        </span>
        {call.display?.summary && <span class="row-summary">{call.display.summary}</span>}
        <span class="row-meta">
          <span>{conv.agentId}</span>
          {conv.title && <span>{conv.title}</span>}
          {user && <span>for {user}</span>}
        </span>
      </a>
      <span class="row-side">
        <span class={`badge level-${call.policy.level}`}>{call.policy.level}</span>
        {destructive && <span class="badge danger">destructive</span>}
        {needsPasskey(call) && (
          <span class="badge" title="Approving it asks for your passkey">
            passkey
          </span>
        )}
        {departure ? (
          <span class="row-note" data-testid="row-note">
            {departure.note}
          </span>
        ) : (
          <span class="row-time">{timeLeft(call.approval?.expiresAt, now)}</span>
        )}
      </span>
    </li>
  );
}
