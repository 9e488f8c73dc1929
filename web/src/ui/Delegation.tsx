import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, errorText, type Api } from '../api';
import {
  dateTime,
  delegationBody,
  delegationForm,
  delegationState,
  formErrors,
  pageTimeZone,
  personLabel,
  type DelegationForm,
} from '../settings';
import type { Delegation } from '../types';
import { describedBy, FieldError, focusFirstInvalid } from './fields';
import { useLoad } from './hooks';

/** The fields as a refusal names them, and what to call them in its sentence ("Until must be …"). */
const FIELD_NAMES: Record<keyof DelegationForm, string> = {
  to: 'The delegate',
  from: 'From',
  until: 'Until',
  reason: 'The reason',
};
const FIELDS = Object.keys(FIELD_NAMES);

type Busy = 'set' | 'end' | null;

/**
 * Out of office: the person's delegation (whom, from, until, why; holding now or still to come), a form that sets
 * one (replacing it), and End now. Times are typed in the browser's time zone and sent as instants. The rules
 * (not yourself, someone on record, at most 90 days) are the server's: its refusals are shown as it words them.
 */
export function OutOfOffice({ api, now }: { api: Api; now: number }) {
  const {
    value: loaded,
    error: loadError,
    reload,
  } = useLoad(
    // Wrapped: "no delegation" (null) is an answer, unlike useLoad's null before the first one.
    () => api.delegation().then((d) => ({ d })),
    (e) =>
      e instanceof ApiError && e.status === 403
        ? 'Only people delegate: this token may not.'
        : `Could not load your delegation: ${errorText(e)}`,
    [api],
  );
  const zone = useMemo(pageTimeZone, []);
  const [current, setCurrent] = useState<Delegation | null | undefined>(undefined);
  const [form, setForm] = useState<DelegationForm>(() => delegationForm(null, now, zone));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [note, setNote] = useState<{ text: string; error?: boolean }>();
  const [busy, setBusy] = useState<Busy>(null);
  // With a delegation in place its form is folded away: what holds is what the section is about.
  const [changing, setChanging] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);

  useEffect(() => {
    if (!loaded) return;
    setCurrent(loaded.d);
    setForm(delegationForm(loaded.d, Date.now(), zone));
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
  if (current === undefined)
    return (
      <Frame>
        <p class="muted">Loading…</p>
      </Frame>
    );

  const state = current ? delegationState(current, now) : undefined;
  const holding = current && state !== 'over' ? current : null;

  function change(field: keyof DelegationForm, value: string) {
    setForm((f) => ({ ...f, [field]: value }));
    if (errors[field]) {
      const { [field]: _gone, ...rest } = errors;
      setErrors(rest);
    }
  }

  function refused(text: string, fields: Record<string, string> = {}) {
    setErrors(fields);
    setNote({ error: true, text });
    focusFirstInvalid(formRef.current);
  }

  async function set(e: Event) {
    e.preventDefault();
    if (busy) return;
    setNote(undefined);
    const checked = delegationBody(form, zone);
    if (!checked.ok) return refused('Not delegated: see the marked fields.', named(checked.errors));
    setBusy('set');
    try {
      const d = await api.setDelegation(checked.body);
      setCurrent(d);
      setForm(delegationForm(d, Date.now(), zone));
      setErrors({});
      setChanging(false);
      setNote({
        text: `${personLabel(d.to)} decides for you from ${dateTime(d.from, zone)} until ${dateTime(d.until, zone)}.`,
      });
    } catch (err) {
      const sorted = formErrors(err, FIELDS, (x) => errorText(x));
      const marked = Object.keys(sorted.fields).length > 0;
      refused(
        [marked ? 'Not delegated: see the marked fields.' : 'Not delegated.', sorted.other].filter(Boolean).join(' '),
        named(sorted.fields, err),
      );
    } finally {
      setBusy(null);
    }
  }

  async function end() {
    if (busy || !holding) return;
    setBusy('end');
    setNote(undefined);
    try {
      await api.endDelegation();
      setCurrent(null);
      setForm(delegationForm(null, Date.now(), zone));
      setErrors({});
      setNote({ text: `Ended: ${personLabel(holding.to)} decides nothing on your behalf from now on.` });
    } catch (err) {
      setNote({ error: true, text: `Could not end it: ${errorText(err)}` });
    } finally {
      setBusy(null);
    }
  }

  const editor = (
    <form
      class="delegation-form"
      ref={formRef}
      onSubmit={(e) => void set(e)}
      aria-labelledby="delegation-form-h"
      noValidate
    >
      {!holding && <h3 id="delegation-form-h">Delegate</h3>}
      <label for="delegation-to-input">To</label>
      <input
        id="delegation-to-input"
        type="text"
        autocomplete="off"
        spellcheck={false}
        required
        value={form.to}
        onInput={(e) => change('to', e.currentTarget.value)}
        aria-invalid={errors.to ? true : undefined}
        aria-describedby={describedBy('delegation-to-hint', 'delegation-to-error', errors.to)}
      />
      <p class="hint" id="delegation-to-hint">
        Their id or email. They must have signed in to Tollgate once.
      </p>
      <FieldError id="delegation-to-error">{errors.to}</FieldError>

      <div class="grid2">
        <div>
          <label for="delegation-from-input">From</label>
          <input
            id="delegation-from-input"
            type="datetime-local"
            value={form.from}
            onInput={(e) => change('from', e.currentTarget.value)}
            aria-invalid={errors.from ? true : undefined}
            aria-describedby={describedBy('delegation-from-hint', 'delegation-from-error', errors.from)}
          />
          <p class="hint" id="delegation-from-hint">
            Empty: from now. Times are in {zone}.
          </p>
          <FieldError id="delegation-from-error">{errors.from}</FieldError>
        </div>
        <div>
          <label for="delegation-until-input">Until</label>
          <input
            id="delegation-until-input"
            type="datetime-local"
            required
            value={form.until}
            onInput={(e) => change('until', e.currentTarget.value)}
            aria-invalid={errors.until ? true : undefined}
            aria-describedby={describedBy('delegation-until-hint', 'delegation-until-error', errors.until)}
          />
          <p class="hint" id="delegation-until-hint">
            It ends by itself then: at most 90 days after it starts.
          </p>
          <FieldError id="delegation-until-error">{errors.until}</FieldError>
        </div>
      </div>

      <label for="delegation-reason-input">Reason (optional)</label>
      <input
        id="delegation-reason-input"
        type="text"
        maxLength={500}
        value={form.reason}
        onInput={(e) => change('reason', e.currentTarget.value)}
        aria-invalid={errors.reason ? true : undefined}
        aria-describedby={describedBy('delegation-reason-hint', 'delegation-reason-error', errors.reason)}
      />
      <p class="hint" id="delegation-reason-hint">
        Recorded in the audit trail with the delegation.
      </p>
      <FieldError id="delegation-reason-error">{errors.reason}</FieldError>

      <div class="actions">
        <button type="submit" class="primary" disabled={busy !== null} data-testid="delegation-save">
          {busy === 'set' ? 'Saving…' : holding ? 'Replace' : 'Delegate'}
        </button>
      </div>
    </form>
  );

  return (
    <Frame>
      {holding ? (
        <div class="delegation-now" data-testid="delegation-current" data-state={state}>
          <p>
            <span class={state === 'active' ? 'badge holds' : 'badge planned'} data-testid="delegation-state">
              {state === 'active' ? 'Active' : 'Planned'}
            </span>{' '}
            <strong>{personLabel(holding.to)}</strong>{' '}
            {state === 'active' ? 'decides for you now.' : 'will decide for you.'}
          </p>
          <dl class="facts">
            <div>
              <dt>Delegate</dt>
              <dd data-testid="delegation-to">{personLabel(holding.to)}</dd>
            </div>
            <div>
              <dt>From</dt>
              <dd>
                <time dateTime={holding.from} data-testid="delegation-from">
                  {dateTime(holding.from, zone)}
                </time>
              </dd>
            </div>
            <div>
              <dt>Until</dt>
              <dd>
                <time dateTime={holding.until} data-testid="delegation-until">
                  {dateTime(holding.until, zone)}
                </time>
              </dd>
            </div>
            {holding.reason && (
              <div>
                <dt>Reason</dt>
                <dd data-testid="delegation-reason">{holding.reason}</dd>
              </div>
            )}
          </dl>
          <div class="actions">
            <button
              type="button"
              class="reject"
              disabled={busy !== null}
              onClick={() => void end()}
              data-testid="delegation-end"
            >
              {busy === 'end' ? 'Ending…' : state === 'active' ? 'End now' : 'Withdraw it'}
            </button>
          </div>
        </div>
      ) : (
        <p class="muted" data-testid="delegation-none">
          You have no delegation: the requests you may decide wait for you.
        </p>
      )}

      {holding ? (
        <details
          class="delegation-change"
          open={changing}
          onToggle={(e) => setChanging(e.currentTarget.open)}
          data-testid="delegation-change"
        >
          <summary id="delegation-form-h">Change or replace it</summary>
          {editor}
        </details>
      ) : (
        editor
      )}
      {note && (
        <p class={note.error ? 'error' : 'notice'} role={note.error ? 'alert' : 'status'} data-testid="delegation-note">
          {note.text}
        </p>
      )}
    </Frame>
  );
}

/**
 * Field messages as sentences: the form's own are whole already; the server's validation messages start at the verb
 * ("must be after from") and get the field's name; a refused delegate is the server's whole sentence.
 */
function named(fields: Record<string, string>, from?: unknown): Record<string, string> {
  const whole = !(from instanceof ApiError) || from.code !== 'validation_failed';
  return Object.fromEntries(
    Object.entries(fields).map(([k, m]) => [
      k,
      whole ? m : `${FIELD_NAMES[k as keyof DelegationForm]} ${m.replace(/\.$/, '')}.`,
    ]),
  );
}

function Frame({ children }: { children: ComponentChildren }) {
  return (
    <section class="delegation" aria-labelledby="delegation-h" data-testid="delegation">
      <h2 id="delegation-h">Out of office</h2>
      <p class="muted">
        Hand your decisions to someone while you are away. While it holds, the requests you may decide reach them too,
        and they decide on your behalf with your rights, never more. It ends by itself.
      </p>
      {children}
    </section>
  );
}
