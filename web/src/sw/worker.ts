/**
 * The inbox's service worker, served at /sw.js so its scope is the whole site (scripts/build-web.js bundles it apart
 * from the page). It only shows push notifications and acts on their clicks (notifications.ts); it caches nothing and
 * sees no request of the page.
 */
import { onClick, onPush, type NotificationData, type ShownNotification, type WorkerDeps } from './notifications';

/* The few worker globals used here: lib.dom (the page's) does not describe a service worker's scope. */
interface ExtendableEvent extends Event {
  waitUntil(work: Promise<unknown>): void;
}
interface PushEvent extends ExtendableEvent {
  readonly data: { json(): unknown } | null;
}
interface NotificationEvent extends ExtendableEvent {
  readonly action: string;
  readonly notification: { readonly data: NotificationData | null; close(): void };
}
interface WindowClient {
  readonly url: string;
  focus(): Promise<WindowClient>;
  postMessage(message: unknown): void;
}
interface WorkerScope {
  readonly location: { origin: string };
  readonly registration: { showNotification(title: string, options: ShownNotification['options']): Promise<void> };
  readonly clients: {
    claim(): Promise<void>;
    matchAll(o: { type: 'window'; includeUncontrolled: boolean }): Promise<WindowClient[]>;
    openWindow(url: string): Promise<WindowClient | null>;
  };
  skipWaiting(): Promise<void>;
  addEventListener(type: 'push', on: (e: PushEvent) => void): void;
  addEventListener(type: 'notificationclick', on: (e: NotificationEvent) => void): void;
  addEventListener(type: 'install' | 'activate', on: (e: ExtendableEvent) => void): void;
  fetch: typeof fetch;
}
declare const self: WorkerScope;
/** The app icon's built name (scripts/build-web.js defines it). */
declare const TOLLGATE_ICON: string;

/** Whatever JSON the push carries; a body that is not JSON is read as no message. */
function payload(e: PushEvent): unknown {
  try {
    return e.data?.json();
  } catch {
    return undefined;
  }
}

const deps: WorkerDeps = {
  origin: self.location.origin,
  icon: TOLLGATE_ICON,
  fetch: (url, init) => self.fetch(url, { ...init, credentials: 'omit', cache: 'no-store' }),
  showNotification: (title, options) => self.registration.showNotification(title, options),
  async openCard(url) {
    // An inbox already open shows the card (the page follows its hash), else a new window opens on it.
    const open = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    const inbox = open.find((c) => new URL(c.url).origin === self.location.origin);
    if (inbox) {
      inbox.postMessage({ type: 'tollgate:open', url });
      await inbox.focus();
      return;
    }
    await self.clients.openWindow(url);
  },
};

self.addEventListener('install', (e) => e.waitUntil(self.skipWaiting()));
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('push', (e) => e.waitUntil(onPush(payload(e), deps)));
self.addEventListener('notificationclick', (e) => {
  e.notification.close();
  e.waitUntil(onClick(e.action, e.notification.data ?? {}, deps));
});
