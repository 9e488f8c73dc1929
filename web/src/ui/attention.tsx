/** What reaches the person outside the page: the tab's title and favicon badge, and desktop notifications. */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import iconSvg from '../../icon.svg';
import { badgedIcon, pageTitle, svgDataUrl } from '../badge';
import {
  chooseNotify,
  notificationFor,
  notifyChosen,
  notifyPermission,
  NotifyPermission,
  worthNotifying,
} from '../notify';
import type { Approval } from '../types';

// The built icon's URL, read before the badge replaces it, so "nothing pending" restores the very same file.
const iconLink = () => document.querySelector<HTMLLinkElement>('link[rel~="icon"]');
const PLAIN_ICON = iconLink()?.href;

/** "(3) Tollgate inbox" and a dot with 3 on the favicon while requests wait; both plain again at zero. */
export function useTabBadge(count: number): void {
  useEffect(() => {
    document.title = pageTitle(count);
    const link = iconLink();
    if (!link) return;
    link.type = 'image/svg+xml';
    link.href = count > 0 || !PLAIN_ICON ? svgDataUrl(badgedIcon(iconSvg, count)) : PLAIN_ICON;
  }, [count]);
  useEffect(
    () => () => {
      const link = iconLink();
      if (link && PLAIN_ICON) link.href = PLAIN_ICON; // signed out: no count
    },
    [],
  );
}

/** The page is in front of the person: they see arrivals without being told. */
const watched = () => document.visibilityState === 'visible' && document.hasFocus();

export interface Notifier {
  /** Notifications are wanted and allowed. */
  on: boolean;
  permission: NotifyPermission;
  /** Turns them on (asking the browser's permission, on this click only) or off. */
  toggle(): Promise<void>;
  /** Tells of calls that just arrived in the list, unless the page is watched or none is worth it. */
  arrived(calls: readonly Approval[]): void;
  /** A call left the list: its notification, if still shown, is out of date. */
  left(id: string): void;
}

export function useNotifications(me: string, openCall: (id: string) => void): Notifier {
  const [chosen, setChosen] = useState(notifyChosen);
  const [permission, setPermission] = useState<NotifyPermission>(notifyPermission);
  const shown = useRef(new Map<string, Notification>());
  const latest = useRef({ chosen, openCall });
  latest.current = { chosen, openCall };

  useEffect(
    () => () => {
      for (const n of shown.current.values()) n.close();
      shown.current.clear();
    },
    [],
  );

  // Stable functions reading refs: the stream's callbacks hold on to them for the page's lifetime.
  const notifier = useMemo<Omit<Notifier, 'on' | 'permission'>>(
    () => ({
      async toggle() {
        if (latest.current.chosen && notifyPermission() === 'granted') {
          chooseNotify(false);
          setChosen(false);
          return;
        }
        if (notifyPermission() === 'unsupported') return;
        const answer = await Notification.requestPermission();
        setPermission(answer);
        chooseNotify(answer === 'granted');
        setChosen(answer === 'granted');
      },
      arrived(calls) {
        // The permission is read now: it can be withdrawn in the browser's settings while the page is open.
        if (!latest.current.chosen || notifyPermission() !== 'granted' || watched()) return;
        const worth = worthNotifying(calls, me);
        if (worth.length === 0) return;
        const { title, body, tag } = notificationFor(worth);
        let n: Notification;
        try {
          n = new Notification(title, { body, tag, icon: PLAIN_ICON });
        } catch {
          return; // where only a service worker may notify (Chrome on Android) there is nothing to show
        }
        n.onclick = () => {
          window.focus();
          if (worth.length === 1) latest.current.openCall(worth[0].id);
          n.close();
        };
        for (const c of worth) shown.current.set(c.id, n);
      },
      left(id) {
        const n = shown.current.get(id);
        if (!n) return;
        shown.current.delete(id);
        if (![...shown.current.values()].includes(n)) n.close();
      },
    }),
    [],
  );

  return { ...notifier, on: chosen && permission === 'granted', permission };
}

/** The toggle in the top bar: one button, its state in aria-pressed; says so when the browser blocks it. */
export function NotifyToggle({ notifier }: { notifier: Notifier }) {
  const [asked, setAsked] = useState(false);
  if (notifier.permission === 'unsupported') return null;
  const blocked = notifier.permission === 'denied';
  return (
    <span class="notify">
      <button
        type="button"
        class={notifier.on ? 'toggle on' : 'toggle'}
        aria-pressed={notifier.on}
        data-testid="notify-toggle"
        title={
          notifier.on
            ? 'A desktop notification for each new request while this tab is in the background'
            : 'Turn on desktop notifications for new requests'
        }
        onClick={() => {
          setAsked(true);
          void notifier.toggle();
        }}
      >
        <svg class="bell" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true">
          <path
            fill="currentColor"
            d="M8 1.5a4.5 4.5 0 0 0-4.5 4.5v2.6L2 11v1h12v-1l-1.5-2.4V6A4.5 4.5 0 0 0 8 1.5ZM6.2 13a1.8 1.8 0 0 0 3.6 0Z"
          />
        </svg>{' '}
        Desktop notifications
        <span class="toggle-state" aria-hidden="true">
          {notifier.on ? 'on' : 'off'}
        </span>
      </button>
      {asked && blocked && (
        <span class="notify-blocked" role="status">
          This browser blocks notifications from this site: allow them in its site settings, then turn them on here.
        </span>
      )}
    </span>
  );
}
