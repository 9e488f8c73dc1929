/**
 * The service worker's handling of push messages and notification clicks (web/src/sw/notifications.ts), with
 * stand-ins for the worker's fetch, notifications and windows. Real Chromium runs the same code in
 * test/browser/push.e2e-spec.ts; here every answer /act can give is played.
 */
import {
  notificationFor,
  onClick,
  onPush,
  readMessage,
  type ShownNotification,
  type WorkerDeps,
} from '../../web/src/sw/notifications';

const ORIGIN = 'https://tollgate.example.com';

const ask = {
  v: 1,
  kind: 'ask',
  toolCallId: 'tc_1',
  toolName: 'deploy',
  title: 'Deploy billing',
  body: 'deploy · bot\n{"service":"billing"}',
  approve: 'aaa.bbb.ccc',
  reject: 'ddd.eee.fff',
};

function worker(answer: { status: number; body?: unknown } | Error) {
  const shown: Array<{ title: string; options: ShownNotification['options'] }> = [];
  const posted: Array<{ url: string; init: unknown }> = [];
  const opened: string[] = [];
  const deps: WorkerDeps = {
    origin: ORIGIN,
    icon: '/assets/icon-192.png',
    async fetch(url, init) {
      posted.push({ url, init });
      if (answer instanceof Error) throw answer;
      return { status: answer.status, json: async () => answer.body };
    },
    async showNotification(title, options) {
      shown.push({ title, options });
    },
    async openCard(url) {
      opened.push(url);
    },
  };
  return { deps, shown, posted, opened };
}

describe('a push message', () => {
  it('shows a held call with Approve and Reject, tagged by the call, kept until acted on', async () => {
    const w = worker({ status: 200 });
    await onPush(ask, w.deps);
    expect(w.shown).toEqual([
      {
        title: 'Deploy billing',
        options: {
          body: ask.body,
          tag: 'tollgate-call-tc_1',
          data: { toolCallId: 'tc_1', toolName: 'deploy', approve: ask.approve, reject: ask.reject },
          actions: [
            { action: 'approve', title: 'Approve' },
            { action: 'reject', title: 'Reject' },
          ],
          requireInteraction: true,
          renotify: false,
          silent: false,
          icon: '/assets/icon-192.png',
          badge: '/assets/icon-192.png',
        },
      },
    ]);
  });

  it('offers Open in place of a withheld Approve, saying so for a passkey', () => {
    const { approve: _a, ...rest } = ask;
    expect(notificationFor({ ...rest, approveWithheld: 'passkey' }).options.actions).toEqual([
      { action: 'open', title: 'Open to approve' },
      { action: 'reject', title: 'Reject' },
    ]);
    expect(notificationFor({ ...rest, approveWithheld: 'too_long' }).options.actions[0]).toEqual({
      action: 'open',
      title: 'Open',
    });
  });

  it('shows an outcome quietly in place of the request, without actions', () => {
    const n = notificationFor({
      v: 1,
      kind: 'outcome',
      toolCallId: 'tc_1',
      toolName: 'deploy',
      title: 'Approved: x',
      body: 'b',
    });
    expect(n.options).toMatchObject({
      tag: 'tollgate-call-tc_1',
      actions: [],
      silent: true,
      requireInteraction: false,
    });
  });

  it('shows a digest of what waits, which opens the inbox', async () => {
    const n = notificationFor({ v: 1, kind: 'digest', title: '3 requests wait for you', body: '• Deploy\n• Pay' });
    expect(n).toMatchObject({
      title: '3 requests wait for you',
      options: { tag: 'tollgate-digest', actions: [], data: {}, renotify: true },
    });
    const w = worker({ status: 200 });
    await onClick('', n.options.data, w.deps);
    expect(w.opened).toEqual([`${ORIGIN}/`]);
  });

  it('still shows something for a message it cannot read (a browser requires one per push)', () => {
    for (const bad of [
      undefined,
      'text',
      { ...ask, v: 2 },
      { ...ask, approve: 'no spaces allowed' },
      { ...ask, title: 7 },
    ]) {
      expect(readMessage(bad)).toBeUndefined();
      expect(notificationFor(bad)).toMatchObject({ title: 'Tollgate', options: { actions: [], data: {} } });
    }
  });
});

describe('a click', () => {
  const data = { toolCallId: 'tc_1', toolName: 'deploy', approve: ask.approve, reject: ask.reject };

  it('on Approve POSTs the token to /act on this origin, asking for JSON, and says it was approved', async () => {
    const w = worker({ status: 200, body: { outcome: 'approved', toolCallId: 'tc_1', status: 'approved' } });
    await onClick('approve', data, w.deps);
    expect(w.posted).toEqual([
      { url: `${ORIGIN}/act/${ask.approve}`, init: { method: 'POST', headers: { accept: 'application/json' } } },
    ]);
    expect(w.shown.map((s) => [s.title, s.options.body, s.options.tag, s.options.actions])).toEqual([
      ['Approved · deploy', 'It may run now.', 'tollgate-call-tc_1', []],
    ]);
    expect(w.opened).toEqual([]);
  });

  it('on Reject uses the reject token; a counted approval says more are needed', async () => {
    const r = worker({ status: 200, body: { outcome: 'rejected' } });
    await onClick('reject', data, r.deps);
    expect(r.posted[0].url).toBe(`${ORIGIN}/act/${ask.reject}`);
    expect(r.shown[0].title).toBe('Rejected · deploy');
    const c = worker({ status: 200, body: { outcome: 'counted' } });
    await onClick('approve', data, c.deps);
    expect(c.shown[0]).toMatchObject({
      title: 'Approval counted · deploy',
      options: { body: 'More approvals are needed before it runs.' },
    });
  });

  it("shows the server's refusal, whose click then opens the card", async () => {
    const w = worker({
      status: 409,
      body: { code: 'arguments_changed', detail: 'Someone edited the arguments after this message was sent.' },
    });
    await onClick('approve', data, w.deps);
    expect(w.shown[0]).toMatchObject({
      title: 'Not approved · deploy',
      options: { body: 'Someone edited the arguments after this message was sent.', data: { toolCallId: 'tc_1' } },
    });
    expect(w.shown[0].options.data.approve).toBeUndefined(); // the follow-up carries no token to use again
    await onClick('', w.shown[0].options.data, w.deps);
    expect(w.opened).toEqual([`${ORIGIN}/#/calls/tc_1`]);
  });

  it('says nothing was decided when Tollgate cannot be reached', async () => {
    const w = worker(new TypeError('Failed to fetch'));
    await onClick('reject', data, w.deps);
    expect(w.shown[0]).toMatchObject({
      title: 'Could not reach Tollgate',
      options: { body: 'Nothing was decided. Tap to open deploy in the inbox.' },
    });
  });

  it('on the notification itself, or on Open, opens the card and uses no token', async () => {
    const w = worker({ status: 200 });
    await onClick('', data, w.deps);
    await onClick('open', { toolCallId: 'tc/2' }, w.deps);
    expect(w.opened).toEqual([`${ORIGIN}/#/calls/tc_1`, `${ORIGIN}/#/calls/tc%2F2`]);
    expect(w.posted).toEqual([]);
  });
});
