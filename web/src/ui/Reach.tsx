import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, errorText, type Api } from '../api';
import {
  browserTimeZone,
  CADENCES,
  formErrors,
  reachBody,
  reachForm,
  zoneSuggestion,
  type ReachForm,
} from '../settings';
import type { Cadence, NotificationSettings } from '../types';
import { describedBy, FieldError, focusFirstInvalid } from './fields';
import { useLoad } from './hooks';

/** The fields as a refusal names them, and what to call them in its sentence ("Quiet hours must be …"). */
const FIELD_NAMES: Record<string, string> = {
  email: 'Email',
  push: 'Push',
  slack: 'Slack direct messages',
  dailyAt: 'The daily digest time',
  timeZone: 'The time zone',
  quietHours: 'Quiet hours',
};
const FIELDS = Object.keys(FIELD_NAMES);

const CHANNELS: ReadonlyArray<{ key: 'email' | 'push' | 'slack'; label: string; hint: string }> = [
  {
    key: 'email',
    label: 'Email',
    hint: 'To the email address your sign-in gives, if this server sends email.',
  },
  {
    key: 'push',
    label: 'Push',
    hint: 'To the devices that get notifications (above).',
  },
  {
    key: 'slack',
    label: 'Slack direct messages',
    hint: "From the Slack app to your linked Slack user, if this server has one. The channel's message is for everyone and stays as it is.",
  },
];

/** Every IANA zone the browser knows, for the time zone field's suggestions (none where it cannot list them). */
function zones(): string[] {
  try {
    return Intl.supportedValuesOf('timeZone');
  } catch {
    return [];
  }
}

/**
 * How Tollgate reaches the person: per channel a message per request, an hourly or daily digest, or nothing; when
 * the daily digest comes, in which time zone, and quiet hours. Saved as a whole; the server checks every field
 * and its refusals are shown under the fields they name.
 */
export function Reach({ api }: { api: Api }) {
  const {
    value: loaded,
    error: loadError,
    reload,
  } = useLoad(
    () => api.notificationSettings(),
    (e) =>
      e instanceof ApiError && e.status === 403
        ? 'Only people get notifications: this token may not.'
        : `Could not load your notification settings: ${errorText(e)}`,
    [api],
  );
  const [stored, setStored] = useState<NotificationSettings | null>(null);
  const [form, setForm] = useState<ReachForm | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [note, setNote] = useState<{ text: string; error?: boolean }>();
  const [busy, setBusy] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  const allZones = useMemo(zones, []);
  const browser = useMemo(browserTimeZone, []);

  useEffect(() => {
    if (!loaded) return;
    setStored(loaded);
    setForm(reachForm(loaded));
  }, [loaded]);

  if (loadError)
    return (
      <Frame>
        <p class="error" role="alert">
          {loadError}{' '}
          <button type="button" class="link" onClick={reload}>
            Try again
          </button>
        </p>
      </Frame>
    );
  if (!form || !stored)
    return (
      <Frame>
        <p class="muted">Loading…</p>
      </Frame>
    );

  const suggestion = form.timeZone === stored.timeZone ? zoneSuggestion(stored.timeZone, browser) : undefined;

  function change(patch: Partial<ReachForm>, field?: string) {
    setForm((f) => (f ? { ...f, ...patch } : f));
    setNote(undefined);
    if (field && errors[field]) {
      const { [field]: _gone, ...rest } = errors;
      setErrors(rest);
    }
  }

  async function save(e: Event) {
    e.preventDefault();
    if (!form || busy) return;
    setBusy(true);
    setNote(undefined);
    try {
      const saved = await api.saveNotificationSettings(reachBody(form));
      setStored(saved);
      setForm(reachForm(saved));
      setErrors({});
      setNote({ text: 'Saved.' });
    } catch (err) {
      const sorted = formErrors(err, FIELDS, (x) => errorText(x));
      setErrors(Object.fromEntries(Object.entries(sorted.fields).map(([k, m]) => [k, `${FIELD_NAMES[k]} ${m}.`])));
      const marked = Object.keys(sorted.fields).length;
      setNote({
        error: true,
        text: [marked ? 'Not saved: see the marked fields.' : 'Not saved.', sorted.other].filter(Boolean).join(' '),
      });
      focusFirstInvalid(formRef.current);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Frame>
      <form class="reach" ref={formRef} onSubmit={(e) => void save(e)} aria-labelledby="reach-h" noValidate>
        <div class="reach-channels">
          {CHANNELS.map((c) => (
            <div class="reach-channel" key={c.key}>
              <label for={`reach-${c.key}`}>{c.label}</label>
              <select
                id={`reach-${c.key}`}
                value={form[c.key]}
                onChange={(e) => change({ [c.key]: e.currentTarget.value as Cadence }, c.key)}
                aria-invalid={errors[c.key] ? true : undefined}
                aria-describedby={describedBy(`reach-${c.key}-hint`, `reach-${c.key}-error`, errors[c.key])}
              >
                {CADENCES.map((o) => (
                  <option key={o.value} value={o.value}>
                    {o.label}
                  </option>
                ))}
              </select>
              <p class="hint" id={`reach-${c.key}-hint`}>
                {c.hint}
              </p>
              <FieldError id={`reach-${c.key}-error`}>{errors[c.key]}</FieldError>
            </div>
          ))}
        </div>

        <div class="grid2">
          <div>
            <label for="reach-daily">Daily digest at</label>
            <input
              id="reach-daily"
              type="time"
              required
              value={form.dailyAt}
              onInput={(e) => change({ dailyAt: e.currentTarget.value }, 'dailyAt')}
              aria-invalid={errors.dailyAt ? true : undefined}
              aria-describedby={describedBy('reach-daily-hint', 'reach-daily-error', errors.dailyAt)}
            />
            <p class="hint" id="reach-daily-hint">
              For the channels set to a daily digest, in your time zone. Hourly digests come at each full hour.
            </p>
            <FieldError id="reach-daily-error">{errors.dailyAt}</FieldError>
          </div>
          <div>
            <label for="reach-zone">Time zone</label>
            <input
              id="reach-zone"
              type="text"
              list="reach-zones"
              autocomplete="off"
              spellcheck={false}
              value={form.timeZone}
              onInput={(e) => change({ timeZone: e.currentTarget.value }, 'timeZone')}
              aria-invalid={errors.timeZone ? true : undefined}
              aria-describedby={describedBy(
                suggestion ? 'reach-zone-hint reach-zone-suggestion' : 'reach-zone-hint',
                'reach-zone-error',
                errors.timeZone,
              )}
            />
            <datalist id="reach-zones">
              {allZones.map((z) => (
                <option key={z} value={z} />
              ))}
            </datalist>
            <p class="hint" id="reach-zone-hint">
              An IANA time zone, such as Europe/Berlin: for the daily digest and quiet hours.
            </p>
            {suggestion && (
              <p class="hint" id="reach-zone-suggestion" data-testid="zone-suggestion">
                Your browser is in {suggestion}.{' '}
                <button type="button" class="link" onClick={() => change({ timeZone: suggestion }, 'timeZone')}>
                  Use {suggestion}
                </button>
              </p>
            )}
            <FieldError id="reach-zone-error">{errors.timeZone}</FieldError>
          </div>
        </div>

        <fieldset
          class="quiet"
          aria-describedby={describedBy('reach-quiet-hint', 'reach-quiet-error', errors.quietHours)}
        >
          <legend>Quiet hours</legend>
          <label class="check">
            <input
              type="checkbox"
              checked={form.quiet}
              onChange={(e) => change({ quiet: e.currentTarget.checked }, 'quietHours')}
              data-testid="reach-quiet"
            />
            Send nothing during quiet hours
          </label>
          {form.quiet && (
            <div class="quiet-times">
              <div>
                <label for="reach-quiet-from">From</label>
                <input
                  id="reach-quiet-from"
                  type="time"
                  required
                  value={form.quietFrom}
                  onInput={(e) => change({ quietFrom: e.currentTarget.value }, 'quietHours')}
                  aria-invalid={errors.quietHours ? true : undefined}
                  aria-describedby={errors.quietHours ? 'reach-quiet-error' : undefined}
                />
              </div>
              <div>
                <label for="reach-quiet-to">To</label>
                <input
                  id="reach-quiet-to"
                  type="time"
                  required
                  value={form.quietTo}
                  onInput={(e) => change({ quietTo: e.currentTarget.value }, 'quietHours')}
                  aria-invalid={errors.quietHours ? true : undefined}
                  aria-describedby={errors.quietHours ? 'reach-quiet-error' : undefined}
                />
              </div>
            </div>
          )}
          <p class="hint" id="reach-quiet-hint">
            In your time zone; may run past midnight. What would have come then arrives in one digest when they end.
          </p>
          <FieldError id="reach-quiet-error">{errors.quietHours}</FieldError>
        </fieldset>

        <div class="actions">
          <button type="submit" class="primary" disabled={busy} data-testid="reach-save">
            {busy ? 'Saving…' : 'Save'}
          </button>
        </div>
        {note && (
          <p class={note.error ? 'error' : 'notice'} role={note.error ? 'alert' : 'status'} data-testid="reach-note">
            {note.text}
          </p>
        )}
      </form>
    </Frame>
  );
}

function Frame({ children }: { children: ComponentChildren }) {
  return (
    <section class="reach-settings" aria-labelledby="reach-h" data-testid="reach">
      <h2 id="reach-h">How Tollgate reaches me</h2>
      <p class="muted">
        For each request you may decide, per channel: a message at once, a digest of what waits, or nothing.
      </p>
      {children}
    </section>
  );
}
