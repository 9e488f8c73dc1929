/**
 * What the service worker does with a push message and with a click on its notification, apart from the worker's
 * globals (worker.ts wires them), so it runs in tests with stand-ins for fetch, notifications and windows.
 *
 * A message (src/adapters/push/push-payload.ts on the server) names a held call with single-use Approve and Reject
 * tokens, or how a call ended. Approve and Reject POST the token to /act/<token> on this origin and say how it went
 * in a small notification; no page opens. A click on the notification itself, or on "Open" where Approve was
 * withheld (a passkey, arguments too long to show), opens the call's card in the inbox.
 */

/** The message as the server sends it (version 1); anything else is read as "open the inbox". */
export type PushMessage = CallMessage | DigestMessage;

/** About one call: a held call (`ask`) or how it ended (`outcome`). */
export interface CallMessage {
  v: 1;
  kind: 'ask' | 'outcome';
  toolCallId: string;
  toolName: string;
  title: string;
  body: string;
  approve?: string;
  reject?: string;
  approveWithheld?: 'passkey' | 'too_long';
  renotify?: boolean;
}

/** What waits for the person (their settings ask for digests): a click opens the inbox. */
export interface DigestMessage {
  v: 1;
  kind: 'digest';
  title: string;
  body: string;
}

/** What the worker keeps on a notification, for its click. */
export interface NotificationData {
  toolCallId?: string;
  toolName?: string;
  approve?: string;
  reject?: string;
}

export interface NotificationAction {
  action: string;
  title: string;
}

/** NotificationOptions as Chromium takes them (actions and renotify are not in every browser's, nor in lib.dom). */
export interface ShownNotification {
  title: string;
  options: {
    body: string;
    tag: string;
    data: NotificationData;
    actions: NotificationAction[];
    requireInteraction: boolean;
    renotify: boolean;
    silent: boolean;
    icon?: string;
    badge?: string;
  };
}

/** What the handlers need of the worker: its origin, fetch, notifications and windows. */
export interface WorkerDeps {
  origin: string;
  icon?: string;
  fetch(
    url: string,
    init: { method: string; headers: Record<string, string> },
  ): Promise<{
    status: number;
    json(): Promise<unknown>;
  }>;
  showNotification(title: string, options: ShownNotification['options']): Promise<void>;
  /** Focuses a window of the inbox showing the card, or opens one. */
  openCard(url: string): Promise<void>;
}

const TOKEN = /^[A-Za-z0-9_.-]{1,4096}$/;
const str = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max;

/** A version 1 message, checked field by field (it came off the network, sealed, but still data); else undefined. */
export function readMessage(raw: unknown): PushMessage | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const m = raw as Record<string, unknown>;
  if (m.v !== 1 || !str(m.title, 500) || !str(m.body, 4000)) return undefined;
  if (m.kind === 'digest') return { v: 1, kind: 'digest', title: m.title, body: m.body };
  if (m.kind !== 'ask' && m.kind !== 'outcome') return undefined;
  if (!str(m.toolCallId, 256) || !str(m.toolName, 256)) return undefined;
  for (const k of ['approve', 'reject'] as const)
    if (m[k] !== undefined && !(typeof m[k] === 'string' && TOKEN.test(m[k] as string))) return undefined;
  if (m.approveWithheld !== undefined && m.approveWithheld !== 'passkey' && m.approveWithheld !== 'too_long')
    return undefined;
  return m as unknown as CallMessage;
}

/** One notification per call: the page's own desktop notifications use the same tag, so one replaces the other. */
export const tagFor = (toolCallId: string): string => `tollgate-call-${toolCallId}`;

export const cardUrl = (origin: string, toolCallId: string): string =>
  `${origin}/#/calls/${encodeURIComponent(toolCallId)}`;

/** The notification a message shows: Approve and Reject, or Open and Reject where Approve is withheld. */
export function notificationFor(raw: unknown, icon?: string): ShownNotification {
  const m = readMessage(raw);
  const common = { icon, badge: icon };
  if (!m)
    return {
      title: 'Tollgate',
      options: {
        body: 'Something may need your decision: open the inbox.',
        tag: 'tollgate-unknown',
        data: {},
        actions: [],
        requireInteraction: false,
        renotify: false,
        silent: false,
        ...common,
      },
    };
  if (m.kind === 'digest')
    // One at a time: the latest says what waits now.
    return {
      title: m.title,
      options: {
        body: m.body,
        tag: 'tollgate-digest',
        data: {},
        actions: [],
        requireInteraction: false,
        renotify: true,
        silent: false,
        ...common,
      },
    };
  const data: NotificationData = { toolCallId: m.toolCallId, toolName: m.toolName };
  if (m.kind === 'outcome')
    // Replaces the request's notification without a sound: the person need not look again.
    return {
      title: m.title,
      options: {
        body: m.body,
        tag: tagFor(m.toolCallId),
        data,
        actions: [],
        requireInteraction: false,
        renotify: false,
        silent: true,
        ...common,
      },
    };
  const actions: NotificationAction[] = m.approve
    ? [{ action: 'approve', title: 'Approve' }]
    : [{ action: 'open', title: m.approveWithheld === 'passkey' ? 'Open to approve' : 'Open' }];
  if (m.reject) actions.push({ action: 'reject', title: 'Reject' });
  return {
    title: m.title,
    options: {
      body: m.body,
      tag: tagFor(m.toolCallId),
      data: { ...data, ...(m.approve ? { approve: m.approve } : {}), ...(m.reject ? { reject: m.reject } : {}) },
      actions,
      requireInteraction: true, // a decision waits: it stays until the person acts or dismisses it
      renotify: !!m.renotify,
      silent: false,
      ...common,
    },
  };
}

export async function onPush(raw: unknown, deps: WorkerDeps): Promise<void> {
  const n = notificationFor(raw, deps.icon);
  await deps.showNotification(n.title, n.options);
}

/** The server's answer to a used token: a decision, or an RFC 9457 problem. */
interface ActAnswer {
  outcome?: 'approved' | 'rejected' | 'counted';
  detail?: string;
}

/**
 * A click: Approve or Reject uses the token and reports in a notification of its own (clicking that one opens the
 * card); anything else opens the card. The clicked notification is already closed by the worker.
 */
export async function onClick(action: string, data: NotificationData, deps: WorkerDeps): Promise<void> {
  const id = data.toolCallId;
  const token = action === 'approve' ? data.approve : action === 'reject' ? data.reject : undefined;
  if (!id) return deps.openCard(`${deps.origin}/`);
  if (!token) return deps.openCard(cardUrl(deps.origin, id));
  const tool = data.toolName ?? 'the call';
  const report = (title: string, body: string) =>
    deps.showNotification(title, {
      body,
      tag: tagFor(id),
      data: { toolCallId: id, toolName: data.toolName },
      actions: [],
      requireInteraction: false,
      renotify: false,
      silent: true,
      icon: deps.icon,
      badge: deps.icon,
    });
  let status: number;
  let answer: ActAnswer;
  try {
    const res = await deps.fetch(`${deps.origin}/act/${token}`, {
      method: 'POST',
      headers: { accept: 'application/json' },
    });
    status = res.status;
    answer = ((await res.json().catch(() => ({}))) ?? {}) as ActAnswer;
  } catch {
    return report('Could not reach Tollgate', `Nothing was decided. Tap to open ${tool} in the inbox.`);
  }
  if (status === 200 && answer.outcome === 'approved') return report(`Approved · ${tool}`, 'It may run now.');
  if (status === 200 && answer.outcome === 'counted')
    return report(`Approval counted · ${tool}`, 'More approvals are needed before it runs.');
  if (status === 200 && answer.outcome === 'rejected') return report(`Rejected · ${tool}`, 'It will not run.');
  const verb = action === 'approve' ? 'approved' : 'rejected';
  return report(`Not ${verb} · ${tool}`, answer.detail ?? `Tollgate answered ${status}. Tap to open the request.`);
}
