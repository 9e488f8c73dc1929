/**
 * Desktop notifications for new requests: opt-in (a toggle in the page, remembered in localStorage), the
 * browser's permission asked only when the person turns them on, and none for what they need not be told.
 */
import { titleOf } from './inbox';
import type { Approval } from './types';

const KEY = 'tollgate.notifications';

export type NotifyPermission = NotificationPermission | 'unsupported';

export function notifyPermission(): NotifyPermission {
  return typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;
}

/** The person's choice, kept for this browser (not per tab: a notification is about the browser, not the sign-in). */
export function notifyChosen(): boolean {
  try {
    return localStorage.getItem(KEY) === 'on';
  } catch {
    return false; // storage blocked: notifications simply start off
  }
}

export function chooseNotify(on: boolean): void {
  try {
    if (on) localStorage.setItem(KEY, 'on');
    else localStorage.removeItem(KEY);
  } catch {
    // storage blocked: the choice lasts as long as the page
  }
}

/**
 * The arrivals worth a notification: not a request made on the person's own behalf (they are in that chat with
 * the agent and see it there), and nothing they decided already (those never arrive: the list drops them).
 */
export function worthNotifying(arrived: readonly Approval[], me: string): Approval[] {
  return arrived.filter((a) => a.status === 'pending' && a.conversation.user?.id !== me);
}

/** One notification per batch of arrivals: the request itself when one came, a count when several did. */
export function notificationFor(calls: readonly Approval[]): { title: string; body: string; tag?: string } {
  if (calls.length === 1) {
    const c = calls[0];
    const user = c.conversation.user ? ` for ${c.conversation.user.name ?? c.conversation.user.id}` : '';
    return {
      title: `Approve? ${titleOf(c)}`,
      body: `${c.display?.summary ?? c.toolName} — from ${c.conversation.agentId}${user}`,
      tag: `tollgate-call-${c.id}`,
    };
  }
  return {
    title: `${calls.length} new requests to approve`,
    body: calls
      .map((c) => titleOf(c))
      .slice(0, 5)
      .join(' · '),
  };
}
