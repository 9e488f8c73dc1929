/**
 * Push notifications on this device: the service worker (/sw.js) and the browser's push subscription, kept in step
 * with the person's subscriptions on the server (/v1/me/push-subscriptions). Turning them on asks the browser's
 * permission on that click only.
 */
import type { Api } from './api';

export interface PushDevice {
  id: string;
  endpoint: string;
  userAgent: string | null;
  createdAt: string;
  lastSentAt: string | null;
  failures: number;
}

/** Why this browser cannot take push notifications, in words; undefined when it can. */
export function pushUnsupported(): string | undefined {
  if (!('serviceWorker' in navigator) || typeof PushManager === 'undefined' || typeof Notification === 'undefined')
    return 'This browser cannot receive push notifications. On an iPhone or iPad, add Tollgate to the Home Screen first (Share → Add to Home Screen), then open it from there.';
  if (!window.isSecureContext)
    return 'Push notifications need a secure page: open Tollgate over https (or on localhost).';
  return undefined;
}

/** The worker, registered at the root so it handles notifications for the whole inbox. */
export function registerWorker(): Promise<ServiceWorkerRegistration> {
  return navigator.serviceWorker.register('/sw.js', { scope: '/', updateViaCache: 'none' });
}

/** This browser's current push subscription, if it has a worker and one. */
export async function currentSubscription(): Promise<PushSubscription | null> {
  if (pushUnsupported()) return null;
  const reg = await navigator.serviceWorker.getRegistration('/');
  return (await reg?.pushManager.getSubscription()) ?? null;
}

const decode = (b64url: string): Uint8Array<ArrayBuffer> => {
  const bin = atob(b64url.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(new ArrayBuffer(bin.length));
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
};

const sameKey = (a: ArrayBuffer | null | undefined, b: Uint8Array): boolean =>
  !!a && a.byteLength === b.byteLength && new Uint8Array(a).every((x, i) => x === b[i]);

/**
 * Subscribes this browser (asking the permission) and tells the server. A subscription made with another server key
 * (the operator changed it) is replaced: the push service would refuse our messages to it.
 */
export async function enablePush(api: Api): Promise<PushDevice> {
  const permission = await Notification.requestPermission();
  if (permission !== 'granted')
    throw new Error(
      permission === 'denied'
        ? 'This browser blocks notifications from this site: allow them in its site settings, then try again.'
        : 'Notifications were not allowed.',
    );
  const { publicKey } = await api.vapidPublicKey();
  const key = decode(publicKey);
  const reg = await registerWorker();
  await navigator.serviceWorker.ready;
  let sub = await reg.pushManager.getSubscription();
  if (sub && !sameKey(sub.options.applicationServerKey, key)) {
    await sub.unsubscribe();
    sub = null;
  }
  sub ??= await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  return api.addPushSubscription({ ...(sub.toJSON() as object), userAgent: navigator.userAgent.slice(0, 300) });
}

/** Unsubscribes this browser, and removes it from the server's list when it is there. */
export async function disablePush(api: Api, devices: readonly PushDevice[]): Promise<void> {
  const sub = await currentSubscription();
  if (!sub) return;
  const mine = devices.find((d) => d.endpoint === sub.endpoint);
  await sub.unsubscribe();
  if (mine) await api.removePushSubscription(mine.id);
}

/** A device's label: the browser and system its user agent names, else "A browser". */
export function deviceName(userAgent: string | null): string {
  if (!userAgent) return 'A browser';
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /Firefox\//.test(userAgent)
      ? 'Firefox'
      : /Chrome\//.test(userAgent)
        ? 'Chrome'
        : /Safari\//.test(userAgent)
          ? 'Safari'
          : undefined;
  const system = /Android/.test(userAgent)
    ? 'Android'
    : /iPhone|iPad/.test(userAgent)
      ? 'iOS'
      : /Mac OS X/.test(userAgent)
        ? 'macOS'
        : /Windows/.test(userAgent)
          ? 'Windows'
          : /Linux/.test(userAgent)
            ? 'Linux'
            : undefined;
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? userAgent.slice(0, 60);
}

/**
 * The worker asks an open inbox to show a call's card (a notification was clicked): the page follows the link's hash
 * when it is one of this origin's. Answers the function that stops listening.
 */
export function followWorkerLinks(): () => void {
  if (!('serviceWorker' in navigator)) return () => undefined;
  const on = (e: MessageEvent) => {
    const m = e.data as { type?: unknown; url?: unknown } | null;
    if (m?.type !== 'tollgate:open' || typeof m.url !== 'string') return;
    const url = new URL(m.url, location.origin);
    if (url.origin === location.origin) location.hash = url.hash || '#/';
  };
  navigator.serviceWorker.addEventListener('message', on);
  return () => navigator.serviceWorker.removeEventListener('message', on);
}
