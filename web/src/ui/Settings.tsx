import { useEffect, useState } from 'preact/hooks';
import { ApiError, errorText, type Api } from '../api';
import { ago } from '../format';
import { currentSubscription, deviceName, disablePush, enablePush, pushUnsupported, type PushDevice } from '../push';
import { OutOfOffice } from './Delegation';
import { useLoad } from './hooks';
import { Reach } from './Reach';

interface Props {
  api: Api;
  now: number;
  onClose(): void;
}

/**
 * The person's settings: push on this device and the devices that get it, how each channel reaches them (digests,
 * quiet hours), and who decides for them while they are away.
 */
export function Settings({ api, now, onClose }: Props) {
  return (
    <section class="settings" aria-labelledby="settings-h" data-testid="settings">
      <div class="inbox-head">
        <h1 id="settings-h">Settings</h1>
        <p class="muted">
          <button type="button" class="link" onClick={onClose}>
            Back to the inbox
          </button>
        </p>
      </div>
      <Notifications api={api} now={now} />
      <Reach api={api} />
      <OutOfOffice api={api} now={now} />
    </section>
  );
}

type Busy = 'enable' | 'disable' | { remove: string } | null;

/**
 * Push notifications: on this device (the browser's subscription, made on a click), and the list of every device the
 * person subscribed, each removable. A notification carries Approve and Reject that act as the person, so a device
 * left behind (a lost phone) is one to remove here.
 */
function Notifications({ api, now }: { api: Api; now: number }) {
  const unsupported = pushUnsupported();
  const [busy, setBusy] = useState<Busy>(null);
  const [note, setNote] = useState<{ text: string; error?: boolean }>();
  const [here, setHere] = useState<string | null | undefined>(undefined); // this browser's endpoint, once known
  const {
    value: devices,
    error,
    reload,
  } = useLoad(
    () => api.pushSubscriptions(),
    (e) =>
      e instanceof ApiError && e.status === 403
        ? 'Only people get notifications: this token may not.'
        : `Could not load your devices: ${errorText(e)}`,
    [api],
  );
  // Whether this server sends push at all (its operator may not have set it up): asked once, before any click.
  const { value: offHere } = useLoad(
    () =>
      api.vapidPublicKey().then(
        () => null,
        (e: unknown) => (e instanceof ApiError && e.problem.code === 'push_unavailable' ? e.detail : null),
      ),
    () => '',
    [api],
  );
  useEffect(() => {
    let stale = false;
    void currentSubscription().then(
      (s) => !stale && setHere(s?.endpoint ?? null),
      () => !stale && setHere(null),
    );
    return () => {
      stale = true;
    };
  }, [devices]);

  // Subscribed here and known to the server: a browser's subscription the server forgot (push service said it
  // is gone, or removed from another device) counts as off, and turning it on sends it again.
  const on = !!here && !!devices?.some((d) => d.endpoint === here);

  async function enable() {
    setBusy('enable');
    setNote(undefined);
    try {
      await enablePush(api);
      setNote({ text: 'Notifications are on for this device. Approve and Reject work from the notification.' });
      reload();
    } catch (e) {
      setNote({
        text:
          e instanceof ApiError && e.problem.code === 'push_unavailable'
            ? `${e.detail}.`
            : `Could not turn notifications on: ${errorText(e)}`,
        error: true,
      });
    } finally {
      setBusy(null);
    }
  }

  async function disable() {
    setBusy('disable');
    setNote(undefined);
    try {
      await disablePush(api, devices ?? []);
      setNote({ text: 'Notifications are off for this device.' });
      reload();
    } catch (e) {
      setNote({ text: `Could not turn notifications off: ${errorText(e)}`, error: true });
    } finally {
      setBusy(null);
    }
  }

  async function remove(d: PushDevice) {
    setBusy({ remove: d.id });
    setNote(undefined);
    try {
      await api.removePushSubscription(d.id);
      setNote({ text: `Removed ${deviceName(d.userAgent)}: it gets no more notifications.` });
      reload();
    } catch (e) {
      setNote({ text: `Could not remove it: ${errorText(e)}`, error: true });
    } finally {
      setBusy(null);
    }
  }

  return (
    <section class="notifications" aria-labelledby="notifications-h" data-testid="notifications">
      <h2 id="notifications-h">Notifications</h2>
      <p class="muted">
        A notification on your phone or computer for each request you may decide, even with this tab closed. Approve and
        Reject work from the notification itself; requests that need a passkey, or whose arguments are too long to show
        there, open here instead.
      </p>
      {unsupported || offHere ? (
        <p class="warning" role="note" data-testid="push-unsupported">
          {unsupported ?? `${offHere}.`}
        </p>
      ) : (
        <div class="device-push">
          <span data-testid="push-state">
            This device: <strong>{on ? 'on' : 'off'}</strong>
          </span>{' '}
          {on ? (
            <button type="button" disabled={busy !== null} onClick={() => void disable()} data-testid="push-disable">
              {busy === 'disable' ? 'Turning off…' : 'Turn off on this device'}
            </button>
          ) : (
            <button
              type="button"
              class="approve"
              disabled={busy !== null || here === undefined}
              onClick={() => void enable()}
              data-testid="push-enable"
            >
              {busy === 'enable' ? 'Turning on…' : 'Turn on for this device'}
            </button>
          )}
        </div>
      )}
      {note && (
        <p class={note.error ? 'error' : 'notice'} role={note.error ? 'alert' : 'status'} data-testid="push-note">
          {note.text}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {devices && devices.length === 0 && <p class="muted">No device gets notifications yet.</p>}
      {devices && devices.length > 0 && (
        <div class="table-wrap">
          <table class="audit" aria-label="Devices that get notifications">
            <thead>
              <tr>
                <th scope="col">Device</th>
                <th scope="col">Added</th>
                <th scope="col">Last notified</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {devices.map((d) => (
                <tr key={d.id} data-device-id={d.id}>
                  <td title={d.userAgent ?? undefined}>
                    {deviceName(d.userAgent)}
                    {d.endpoint === here && <span class="muted"> (this device)</span>}
                    {d.failures > 0 && (
                      <span class="muted">
                        {' '}
                        · {d.failures} {d.failures === 1 ? 'notification' : 'notifications'} not delivered
                      </span>
                    )}
                  </td>
                  <td>
                    <time dateTime={d.createdAt} title={d.createdAt}>
                      {ago(d.createdAt, now)}
                    </time>
                  </td>
                  <td>
                    {d.lastSentAt ? (
                      <time dateTime={d.lastSentAt} title={d.lastSentAt}>
                        {ago(d.lastSentAt, now)}
                      </time>
                    ) : (
                      <span class="muted">never</span>
                    )}
                  </td>
                  <td>
                    <button
                      type="button"
                      class="reject"
                      disabled={busy !== null}
                      onClick={() => void remove(d)}
                      aria-label={`Remove ${deviceName(d.userAgent)}`}
                    >
                      {typeof busy === 'object' && busy?.remove === d.id ? 'Removing…' : 'Remove'}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
