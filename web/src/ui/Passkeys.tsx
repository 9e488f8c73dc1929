import { startAuthentication, startRegistration } from '@simplewebauthn/browser';
import { useState } from 'preact/hooks';
import { useLoad } from './hooks';
import { ApiError, errorText, type Api } from '../api';
import { ago } from '../format';
import { CANCELLED, isCancelled, isIpAddressHost, localhostHref, webAuthnErrorText, type Passkey } from '../passkeys';

/** A failed request or prompt in words: the server's `detail`, "Cancelled." for a dismissed prompt. */
export function passkeyFailure(e: unknown): string {
  if (e instanceof ApiError) return e.status !== 0 ? e.detail : `Could not reach the server: ${errorText(e)}`;
  return webAuthnErrorText(e);
}

/**
 * Passkeys need a domain name: on a page reached by an IP address the browser refuses them, so say so and offer the
 * same page as localhost (which is this machine, where the server allows an IP address at all).
 */
export function IpAddressNotice() {
  if (!isIpAddressHost(location.hostname)) return null;
  const href = localhostHref(location);
  return (
    <p class="warning" role="note" data-testid="passkeys-ip">
      Passkeys need a name such as localhost, not an IP address: browsers refuse them on {location.hostname}. Open{' '}
      <a href={href}>{href}</a> instead.
    </p>
  );
}

interface Props {
  api: Api;
  now: number;
  onClose(): void;
}

type Busy = { what: 'add'; step: 'confirm' | 'create' | 'save' } | { what: 'remove'; id: string } | null;

/**
 * The person's passkeys: what approves the calls whose rule asks for one. Adding a second passkey, and removing
 * any, needs a passkey the person already has, so a stolen session alone cannot swap in its own.
 */
export function Passkeys({ api, now, onClose }: Props) {
  const [note, setNote] = useState<{ text: string; error?: boolean }>();
  const [name, setName] = useState('');
  const [busy, setBusy] = useState<Busy>(null);

  const {
    value: list,
    error,
    reload,
  } = useLoad(
    () => api.passkeys(),
    (e) =>
      e instanceof ApiError && e.status === 403
        ? 'Only people have passkeys: this token may not use them.'
        : `Could not load your passkeys: ${passkeyFailure(e)}`,
    [api],
  );

  async function add(e: Event) {
    e.preventDefault();
    if (busy) return;
    setNote(undefined);
    const label = name.trim();
    try {
      setBusy({ what: 'add', step: 'create' });
      const options = await api.passkeyOptions();
      let assertion;
      if (options.assertion) {
        setBusy({ what: 'add', step: 'confirm' });
        assertion = await startAuthentication({ optionsJSON: options.assertion.publicKey });
        setBusy({ what: 'add', step: 'create' });
      }
      const response = await startRegistration({ optionsJSON: options.publicKey });
      setBusy({ what: 'add', step: 'save' });
      const made = await api.addPasskey({
        response,
        ...(label ? { name: label } : {}),
        ...(assertion ? { assertion } : {}),
      });
      setName('');
      setNote({ text: `Added “${made.name}”. Calls that ask for a passkey can now be approved with it.` });
      reload();
    } catch (err) {
      setNote(isCancelled(err) ? { text: CANCELLED } : { text: passkeyFailure(err), error: true });
    } finally {
      setBusy(null);
    }
  }

  async function remove(p: Passkey) {
    if (busy) return;
    setNote(undefined);
    setBusy({ what: 'remove', id: p.id });
    try {
      const options = await api.passkeyAssertionOptions();
      const assertion = await startAuthentication({ optionsJSON: options.publicKey });
      await api.removePasskey(p.id, assertion);
      setNote({ text: `Removed “${p.name}”.` });
      reload();
    } catch (err) {
      setNote(isCancelled(err) ? { text: CANCELLED } : { text: passkeyFailure(err), error: true });
    } finally {
      setBusy(null);
    }
  }

  const adding = busy?.what === 'add' ? busy.step : null;
  // On an IP address the browser refuses every prompt: the list shows, the actions wait for a named address.
  const usable = !isIpAddressHost(location.hostname);
  return (
    <section class="passkeys" aria-labelledby="passkeys-h" data-testid="passkeys">
      <div class="inbox-head">
        <h1 id="passkeys-h">Passkeys</h1>
        <p class="muted">
          Some requests ask for a passkey before they can be approved: your device checks it is you (a fingerprint, a
          face, a PIN) and signs that exact request.{' '}
          <button type="button" class="link" onClick={onClose}>
            Back to the inbox
          </button>
        </p>
      </div>
      <IpAddressNotice />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {note && (
        <p class={note.error ? 'error' : 'notice'} role={note.error ? 'alert' : 'status'} data-testid="passkeys-note">
          {note.text}
        </p>
      )}
      {!list && !error && <p class="muted">Loading…</p>}
      {list && list.length === 0 && (
        <div class="empty" data-testid="passkeys-empty">
          <p>
            <strong>No passkeys yet.</strong>
          </p>
          <p class="muted">Add one to approve the requests that ask for it.</p>
        </div>
      )}
      {list && list.length > 0 && (
        <div class="table-wrap">
          <table class="audit" aria-label="Your passkeys">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Added</th>
                <th scope="col">Last used</th>
                <th scope="col">Synced</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((p) => (
                <tr key={p.id} data-passkey-id={p.id}>
                  <td>{p.name}</td>
                  <td>
                    <time dateTime={p.createdAt} title={p.createdAt}>
                      {ago(p.createdAt, now)}
                    </time>
                  </td>
                  <td>
                    {p.lastUsedAt ? (
                      <time dateTime={p.lastUsedAt} title={p.lastUsedAt}>
                        {ago(p.lastUsedAt, now)}
                      </time>
                    ) : (
                      <span class="muted">never</span>
                    )}
                  </td>
                  <td>{p.backedUp ? 'synced' : <span class="muted">this device only</span>}</td>
                  <td>
                    {usable && (
                      <button
                        type="button"
                        class="reject"
                        disabled={busy !== null}
                        onClick={() => void remove(p)}
                        aria-label={`Remove ${p.name}`}
                      >
                        {busy?.what === 'remove' && busy.id === p.id ? 'Confirm with a passkey…' : 'Remove'}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list && usable && (
        <form class="passkey-add" onSubmit={(e) => void add(e)} aria-label="Add a passkey">
          <h2>Add a passkey</h2>
          <label for="passkey-name">Name (to tell your passkeys apart)</label>
          <input
            id="passkey-name"
            type="text"
            value={name}
            maxLength={100}
            placeholder="e.g. Work laptop"
            autocomplete="off"
            onInput={(e) => setName(e.currentTarget.value)}
          />
          {list.length > 0 && (
            <p class="hint" data-testid="passkeys-confirm-first">
              Confirm with a passkey you already have: adding another needs one of yours first.
            </p>
          )}
          <div class="actions">
            <button type="submit" class="approve" disabled={busy !== null}>
              {adding === 'confirm'
                ? 'Confirm with a passkey you already have…'
                : adding === 'create'
                  ? 'Creating the passkey…'
                  : adding === 'save'
                    ? 'Saving…'
                    : 'Add a passkey'}
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
