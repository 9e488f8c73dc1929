import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, createApi, errorText, publicApi } from '../api';
import {
  Departure,
  departureFromDecision,
  departureFromEvent,
  depart,
  emptyInbox,
  InboxState,
  notifiedFromEvent,
  pendingItems,
  readsConversation,
  prune,
  told,
  titleOf,
  withSnapshot,
} from '../inbox';
import {
  canReadAudit,
  clearSession,
  displayName,
  endSsoSession,
  isSso,
  loadSession,
  loadSsoSession,
  saveSession,
  Session,
} from '../session';
import { needsPasskey } from '../passkeys';
import { openStream, Stream, StreamState, StreamStatus } from '../sse';
import type { Approval, AuditEvent, DecisionBody, TenantStatus, Tool, UiConfig } from '../types';
import { NotifyToggle, useNotifications, useTabBadge } from './attention';
import { asksTwice, Card, Intent } from './Card';
import { Questions } from './Questions';
import { hasModifier, hrefFor, isTyping, MOD_KEY, Route, useKeydown, useNow, useRoute } from './hooks';
import { Grants, mayListGrants } from './Grants';
import { Changes } from './Changes';
import { Inbox, ListNote } from './Inbox';
import { Passkeys } from './Passkeys';
import { Settings } from './Settings';
import { followWorkerLinks } from '../push';
import { SignIn } from './SignIn';
import { StreamBanner } from './StreamBanner';
import { Timeline } from './Timeline';

export function App() {
  const [config, setConfig] = useState<UiConfig | null>(null);
  const [session, setSession] = useState<Session | null>(() => loadSession());
  // A token kept in this tab wins; else the single sign-on session the cookie names, if any (asked once).
  const [checking, setChecking] = useState(session === null);
  const [notice, setNotice] = useState<string>();
  useEffect(() => {
    publicApi.config().then(
      (c) => {
        setConfig(c);
        // Only a server with single sign-on can have a session for this browser: no other asks /auth/session.
        if (session !== null || !c.sso) return setChecking(false);
        void loadSsoSession().then((s) => {
          if (s) setSession(s);
          setChecking(false);
        });
      },
      () => {
        setConfig({ devSignIn: false });
        setChecking(false);
      },
    );
  }, []);
  const signOut = useCallback(
    (why?: string) => {
      // Signing out of a single sign-on session ends it on the server (and at the provider, where it offers that).
      if (!why && session && isSso(session)) return void endSsoSession(session);
      clearSession();
      setSession(null);
      setNotice(why);
    },
    [session],
  );
  useEffect(() => {
    if (!session) document.title = 'Sign in · Tollgate';
  }, [session]);

  if (!session && checking) return null;
  if (!session) {
    return (
      <SignIn
        config={config}
        notice={notice}
        onSignedIn={(s, remember) => {
          saveSession(s, remember);
          setNotice(undefined);
          setSession(s);
        }}
      />
    );
  }
  return <Workspace key={session.token || `sso:${session.sub}`} session={session} onSignOut={signOut} />;
}

const STREAM_WORDS: Record<StreamState, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
};
const LEAVING = new Set(['ToolCallApproved', 'ToolCallRejected', 'ToolCallExpired', 'ToolCallCancelled']);

function Workspace({ session, onSignOut }: { session: Session; onSignOut(why?: string): void }) {
  const me = session.sub;
  const skew = useRef(0);
  const refusedWords = isSso(session)
    ? 'Your session has ended (signed out elsewhere, expired or idle too long). Sign in again.'
    : 'Your token was refused: it has expired or is no longer valid. Sign in again.';
  const api = useMemo(
    () =>
      createApi(
        session,
        () => onSignOut(refusedWords),
        (s) => {
          if (Math.abs(s - skew.current) > 1500) skew.current = s; // the Date header has whole seconds: ignore jitter
        },
      ),
    [session.token, session.csrfToken],
  );
  const now = useNow(1000) + skew.current;
  const [route, navigate] = useRoute();
  const routeRef = useRef(route);
  routeRef.current = route;

  // The inbox state lives in a ref too, so stream callbacks always see the latest.
  const inboxRef = useRef<InboxState>(emptyInbox);
  const [inbox, setInbox] = useState<InboxState>(emptyInbox);
  const update = useCallback((fn: (s: InboxState) => InboxState) => {
    inboxRef.current = fn(inboxRef.current);
    setInbox(inboxRef.current);
  }, []);
  const [loaded, setLoaded] = useState(false);
  const [loadError, setLoadError] = useState<string>();
  const [arrivedAt, setArrivedAt] = useState<ReadonlyMap<string, number>>(new Map());
  const [tools, setTools] = useState<ReadonlyMap<string, Tool>>(new Map());
  const flagsSeen = useRef(new Map<string, boolean>());
  const [stream, setStream] = useState<StreamStatus>({ state: 'connecting' });
  const streamRef = useRef<Stream | null>(null);
  // From the moment the stream drops until a snapshot read after it is back: the list may be out of date.
  const [stale, setStale] = useState(false);
  const drops = useRef(0);
  const resync = useRef(false);
  const [snapshotAt, setSnapshotAt] = useState<number>();
  const [status, setStatus] = useState<TenantStatus | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const [selected, setSelected] = useState<string | null>(null);
  const lastIndex = useRef(0);
  const [listNote, setListNote] = useState<ListNote>();
  // A list shortcut (r, e, or a on a call that asks twice) carried on in the card it opens.
  const [intent, setIntent] = useState<{ id: string; intent: Intent }>();
  // Calls this person decided here, or is deciding: when one leaves the list, the row that slides into its place is
  // selected as if they had moved to it (whether the stream's event or the decision's answer comes first).
  const mine = useRef(new Set<string>());
  const notifier = useNotifications(me, (id) => navigate({ view: 'call', id }));
  const [help, setHelp] = useState(false);
  const [convVersion, setConvVersion] = useState(0);
  // The grants view, over the list (not a route: a link to a card still opens over whichever is shown).
  const [showGrants, setShowGrants] = useState(false);
  const [grantsVersion, setGrantsVersion] = useState(0);
  const [changesVersion, setChangesVersion] = useState(0);
  const [questionsVersion, setQuestionsVersion] = useState(0);

  const announce = useCallback(
    (text: string) => setAnnouncement((prev) => (prev === text ? `${text}\u200b` : text)),
    [],
  );

  // ---- loading: one snapshot at a time; a request made meanwhile runs once more after it ----
  const loading = useRef({ running: false, again: false, first: true });
  const refresh = useCallback(async () => {
    const l = loading.current;
    if (l.running) {
      l.again = true;
      return;
    }
    l.running = true;
    try {
      do {
        l.again = false;
        const resyncing = resync.current;
        const epoch = drops.current;
        resync.current = false;
        try {
          const snapshot = await api.pendingApprovals();
          let arrived: Approval[] = [];
          update((s) => {
            const r = withSnapshot(s, snapshot, Date.now());
            arrived = r.arrived;
            return r.state;
          });
          if (!l.first && arrived.length > 0) {
            const at = Date.now();
            setArrivedAt((m) => new Map([...m, ...arrived.map((a) => [a.id, at] as const)].slice(-200)));
            announce(
              arrived.length === 1
                ? `New request: ${titleOf(arrived[0])} from ${arrived[0].conversation.agentId}`
                : `${arrived.length} new requests`,
            );
            notifier.arrived(arrived);
          }
          l.first = false;
          setLoaded(true);
          setLoadError(undefined);
          setSnapshotAt(Date.now());
          // Read after the stream came back (and before it dropped again): the list is current once more.
          if (resyncing && epoch === drops.current) setStale(false);
        } catch (e) {
          if (resyncing) resync.current = true;
          if (!(e instanceof ApiError && e.status === 401))
            setLoadError(
              e instanceof ApiError && e.status === 403
                ? 'Agent tokens cannot use the inbox.'
                : `Could not load the inbox: ${errorText(e)}`,
            );
        }
      } while (l.again);
    } finally {
      l.running = false;
    }
  }, [api]);
  const refreshTimer = useRef<number | undefined>(undefined);
  const scheduleRefresh = useCallback(() => {
    clearTimeout(refreshTimer.current);
    refreshTimer.current = window.setTimeout(() => void refresh(), 100);
  }, [refresh]);

  const loadTools = useCallback(() => {
    api.tools().then(
      (list) => setTools(new Map(list.map((t) => [t.name, t]))),
      () => undefined,
    );
  }, [api]);
  const loadStatus = useCallback(() => {
    api.status().then(setStatus, () => setStatus(null));
  }, [api]);

  const leave = useCallback(
    (d: Departure) => {
      const { pending: list, selectedId: current } = keyState.current;
      if (d.id === current && mine.current.has(d.id)) {
        const at = list.findIndex((p) => p.id === d.id);
        setSelected(list[at + 1]?.id ?? list[at - 1]?.id ?? null);
      }
      let listed = false;
      update((s) => {
        const r = depart(s, d);
        listed = r.listed;
        return r.state;
      });
      if (listed) announce(`${inboxRef.current.recent[0]?.title ?? d.title}: ${d.note}`);
      notifier.left(d.id);
    },
    [update, announce],
  );

  // ---- the live stream: opened first, so the snapshot that follows each (re)connect misses nothing ----
  useEffect(() => {
    void refresh();
    loadTools();
    loadStatus();
    const onEvent = (e: AuditEvent) => {
      if (e.type === 'ApprovalRequested' || e.type === 'ToolCallApprovalRecorded')
        scheduleRefresh(); // a quorum's progress: "1 of 2"
      else if (e.type === 'ToolCallProposed' && e.toolCallId) {
        const flags = e.data.toolFlags as { destructive?: boolean } | undefined;
        if (flags) flagsSeen.current.set(e.toolCallId, !!flags.destructive);
      } else if (LEAVING.has(e.type)) {
        const d = departureFromEvent(e, me, Date.now());
        if (d) leave(d);
      } else if (e.type === 'ToolCallNotified') {
        const d = notifiedFromEvent(e, session, Date.now());
        let added = false;
        if (d)
          update((s) => {
            const r = told(s, d);
            added = r.added;
            return r.state;
          });
        if (d && added) announce(`${d.title}: ${d.note}`);
      } else if (e.type === 'ToolRegistered') loadTools();
      else if (e.type === 'Halted' || e.type === 'Resumed') loadStatus();
      else if (e.type === 'GrantCreated' || e.type === 'GrantRevoked') setGrantsVersion((v) => v + 1);
      else if (e.type.startsWith('Question')) setQuestionsVersion((v) => v + 1);
      else if (e.type.startsWith('Change')) setChangesVersion((v) => v + 1);
      const r = routeRef.current;
      if (r.view === 'conversation' && e.conversationId === r.id) setConvVersion((v) => v + 1);
    };
    const s = openStream({
      tollgate: api.tollgate,
      onOpen: () => {
        resync.current = true;
        void refresh();
      },
      onState: (st) => {
        if (st.state === 'reconnecting' && st.retryAt !== undefined) {
          drops.current += 1;
          setStale(true);
        }
        setStream(st);
      },
      onRefused: (code) =>
        code === 401 ? onSignOut(refusedWords) : setLoadError('This token may not read the live stream.'),
      onEvent,
    });
    streamRef.current = s;
    return () => {
      s.close();
      clearTimeout(refreshTimer.current);
    };
  }, [api]);

  // Departed calls linger with their note, then leave the list.
  useEffect(() => {
    if (inbox.items.some((i) => inbox.gone.has(i.id))) update((s) => prune(s, Date.now()));
  }, [now]);

  const pending = pendingItems(inbox);
  useTabBadge(pending.length);
  // A click on a push notification opens its card here when the inbox is already open (web/src/sw).
  useEffect(() => followWorkerLinks(), []);

  // The selection follows the list: when the selected call leaves, the one that takes its place is selected.
  const selectedId = pending.some((p) => p.id === selected)
    ? selected
    : (pending[Math.min(lastIndex.current, pending.length - 1)]?.id ?? null);
  const idx = pending.findIndex((p) => p.id === selectedId);
  if (idx >= 0) lastIndex.current = idx;
  // Keys can come faster than renders: the handler reads the list and the selection from refs. `chosen` is the row
  // the person selected; when it leaves, `selectedId` moves on by itself to a row they may not have looked at.
  const keyState = useRef({ pending, selectedId, chosen: selected });
  keyState.current = { pending, selectedId, chosen: selected };

  const focusRow = (id: string | null) => {
    if (!id) return;
    (document.querySelector(`[data-call-id="${CSS.escape(id)}"] .row-main`) as HTMLElement | null)?.focus();
  };

  // Back on the list after a card or a timeline: focus returns to the selected row.
  const prevRoute = useRef<Route>(route);
  useEffect(() => {
    if (route.view === 'inbox' && prevRoute.current.view !== 'inbox') setTimeout(() => focusRow(selectedId), 0);
    if (route.view !== 'call') setIntent(undefined);
    prevRoute.current = route;
  }, [route]);

  const isDestructive = useCallback(
    // The call's own record first; the registry, the live event and the reason text for calls made before it had one.
    (c: Approval) =>
      !!c.policy.toolFlags?.destructive ||
      !!tools.get(c.toolName)?.destructive ||
      !!flagsSeen.current.get(c.id) ||
      /\bdestructive\b/.test(c.policy.reason),
    [tools],
  );

  const decide = useCallback(
    async (call: Approval, body: DecisionBody) => {
      mine.current.add(call.id);
      try {
        const updated = await api.decide(call.id, body);
        if (updated.decision) leave(departureFromDecision(call, updated.decision, me, Date.now(), body.decision));
        // Four eyes (governance): the call is approved, the tenant-wide grant it would make waits (listed in Changes).
        if ((updated as { pendingChange?: unknown }).pendingChange) {
          announce('Approved. The tenant-wide grant waits for another admin.');
          setChangesVersion((v) => v + 1);
        }
        navigate({ view: 'inbox' });
      } catch (e) {
        mine.current.delete(call.id);
        // Someone was faster: the card shows their decision instead.
        if (e instanceof ApiError && e.problem.code === 'already_decided' && e.problem.decision) {
          leave(departureFromDecision(call, e.problem.decision, me, Date.now()));
          return;
        }
        throw e;
      }
    },
    [api, leave],
  );

  const openCard = (id: string, carryOn: Intent) => {
    setIntent({ id, intent: carryOn });
    navigate({ view: 'call', id });
  };

  /** `a` on the list: the card's approve, without opening the card unless the call asks twice (then it opens armed). */
  async function approveFromList(call: Approval) {
    // A call that asks twice opens armed; one that asks for a passkey opens, where its Approve runs the prompt.
    if (asksTwice(call, isDestructive(call)) || needsPasskey(call)) return openCard(call.id, 'approve');
    if (mine.current.has(call.id)) return; // already on its way
    try {
      await decide(call, { decision: 'approve' });
    } catch (e) {
      setListNote({ error: true, text: `Could not approve “${titleOf(call)}”: ${errorText(e)}` });
    }
  }

  // ---- list shortcuts: j/k or arrows move, Enter opens, a/r/e/t act on the selected row, ? help, Esc leaves a timeline ----
  useKeydown((e: KeyboardEvent) => {
    if (hasModifier(e) || isTyping(e) || route.view === 'call') return;
    if (e.key === '?') {
      setHelp((h) => !h);
      return;
    }
    if (help) return; // the help dialog is modal: it closes itself on Esc
    if (route.view === 'conversation' || route.view === 'passkeys' || route.view === 'settings') {
      if (e.key === 'Escape') navigate({ view: 'inbox' });
      return;
    }
    if (showGrants) {
      if (e.key === 'Escape') setShowGrants(false);
      return;
    }
    const move = e.key === 'j' || e.key === 'ArrowDown' ? 1 : e.key === 'k' || e.key === 'ArrowUp' ? -1 : 0;
    const { pending: list, selectedId: current, chosen } = keyState.current;
    const call = list.find((p) => p.id === current);
    if (move !== 0 && list.length > 0) {
      e.preventDefault();
      setListNote(undefined);
      const at = list.findIndex((p) => p.id === current);
      const next = list[Math.max(0, Math.min(list.length - 1, (at < 0 ? -1 : at) + move))];
      keyState.current = { pending: list, selectedId: next.id, chosen: next.id };
      setSelected(next.id);
      focusRow(next.id);
    } else if ((e.key === 'Enter' || e.key === 'o') && call && !(e.target as HTMLElement).closest?.('a,button')) {
      e.preventDefault();
      navigate({ view: 'call', id: call.id });
    } else if (call && (e.key === 'a' || e.key === 'r' || e.key === 'e' || e.key === 't')) {
      e.preventDefault();
      setListNote(undefined);
      if (e.key === 't') navigate({ view: 'conversation', id: call.conversationId });
      else if (e.key === 'r' || e.key === 'e') openCard(call.id, e.key === 'r' ? 'reject' : 'edit');
      else if (call.id !== chosen) {
        // The selection moved by itself (someone else decided the chosen row): approving needs a look at which row it is now.
        keyState.current = { pending: list, selectedId: call.id, chosen: call.id };
        setSelected(call.id);
        focusRow(call.id);
        const text = `“${titleOf(call)}” is selected now: press a again to approve it.`;
        setListNote({ text });
        announce(text);
      } else void approveFromList(call);
    }
  });
  const roles = session.roles.filter((r) => r !== 'agent');
  // Passkeys are people's: an agent's token has none (the API answers it 403).
  const person = !session.roles.includes('agent');
  const halts = status?.halts ?? [];
  return (
    <div class="app">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href="#/">
          Tollgate
        </a>
        <span
          class={`live ${stream.state}`}
          role="status"
          data-testid="stream-state"
          title="Live updates from the server"
        >
          <span class="dot" aria-hidden="true" /> {STREAM_WORDS[stream.state]}
        </span>
        <span class="spacer" />
        {mayListGrants(session.roles) && (
          <button
            type="button"
            class={showGrants ? 'toggle on' : 'toggle'}
            aria-pressed={showGrants}
            data-testid="grants-toggle"
            onClick={() => {
              if (route.view === 'conversation' || route.view === 'passkeys' || route.view === 'settings')
                navigate({ view: 'inbox' });
              setShowGrants((v) => !v);
            }}
          >
            Grants
          </button>
        )}
        {person && (
          <a
            class={route.view === 'passkeys' ? 'toggle on' : 'toggle'}
            href={hrefFor({ view: 'passkeys' })}
            aria-current={route.view === 'passkeys' ? 'page' : undefined}
            data-testid="passkeys-link"
            onClick={() => setShowGrants(false)}
          >
            Passkeys
          </a>
        )}
        {person && (
          <a
            class={route.view === 'settings' ? 'toggle icon-only on' : 'toggle icon-only'}
            href={hrefFor({ view: 'settings' })}
            aria-current={route.view === 'settings' ? 'page' : undefined}
            aria-label="Settings"
            title="Settings: notifications on your phone and computer"
            data-testid="settings-link"
            onClick={() => setShowGrants(false)}
          >
            <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
              <path
                fill="currentColor"
                fill-rule="evenodd"
                d="M6.9 1h2.2l.3 1.8 1.2.5 1.5-1 1.6 1.6-1 1.5.5 1.2 1.8.3v2.2l-1.8.3-.5 1.2 1 1.5-1.6 1.6-1.5-1-1.2.5-.3 1.8H6.9l-.3-1.8-1.2-.5-1.5 1-1.6-1.6 1-1.5-.5-1.2L1 9.1V6.9l1.8-.3.5-1.2-1-1.5 1.6-1.6 1.5 1 1.2-.5zM8 5.6a2.4 2.4 0 1 0 0 4.8 2.4 2.4 0 0 0 0-4.8z"
              />
            </svg>
          </a>
        )}
        <NotifyToggle notifier={notifier} />
        <span class="who">
          <strong>{displayName(session)}</strong>{' '}
          <span class="muted">
            {roles.join(', ') || 'no role'} · {session.tenant}
          </span>
        </span>
        <button type="button" class="link" onClick={() => onSignOut()}>
          Sign out
        </button>
      </header>
      {stale && (
        <StreamBanner
          stream={stream}
          syncedAt={Math.max(stream.heardAt ?? 0, snapshotAt ?? 0) || undefined}
          now={Date.now()}
          onRetry={() => {
            streamRef.current?.retryNow();
            if (stream.state === 'live') {
              resync.current = true;
              void refresh();
            }
          }}
        />
      )}
      {halts.length > 0 && (
        <p class="halt" role="alert">
          <strong>Halted.</strong> {halts.map((h) => `${h.scope}${h.id ? ` ${h.id}` : ''}: ${h.reason}`).join(' · ')} —
          pending calls in scope were cancelled and nothing in scope runs until an admin resumes.
        </p>
      )}
      {session.exp && session.exp * 1000 - now < 10 * 60_000 && (
        <p class="notice" role="status">
          Your sign-in ends in {Math.max(0, Math.round((session.exp * 1000 - now) / 60_000))} min.
        </p>
      )}
      <main id="main" tabIndex={-1}>
        {route.view === 'passkeys' && person ? (
          <Passkeys api={api} now={now} onClose={() => navigate({ view: 'inbox' })} />
        ) : route.view === 'settings' && person ? (
          <Settings api={api} now={now} onClose={() => navigate({ view: 'inbox' })} />
        ) : showGrants && route.view !== 'conversation' ? (
          <Grants
            api={api}
            roles={session.roles}
            now={now}
            version={grantsVersion}
            onClose={() => setShowGrants(false)}
          />
        ) : route.view === 'conversation' ? (
          <Timeline api={api} id={route.id} me={me} withAudit={canReadAudit(session)} now={now} version={convVersion} />
        ) : (
          <>
            <Questions api={api} now={now} version={questionsVersion} />
            {session.roles.includes('admin') && <Changes api={api} me={me} now={now} version={changesVersion} />}
            <Inbox
              inbox={inbox}
              loaded={loaded}
              error={loadError}
              note={listNote}
              selected={selectedId}
              now={now}
              arrivedAt={arrivedAt}
              isDestructive={isDestructive}
              onSelect={setSelected}
            />
          </>
        )}
      </main>
      {route.view === 'call' && (
        <CardFor
          key={route.id}
          id={route.id}
          inbox={inbox}
          api={api}
          me={me}
          roles={session.roles}
          admin={session.roles.includes('admin')}
          now={now}
          intent={intent?.id === route.id ? intent.intent : undefined}
          isDestructive={isDestructive}
          tools={tools}
          onDecide={decide}
          onClose={() => navigate({ view: 'inbox' })}
        />
      )}
      <footer class="keys-legend" aria-label="Keyboard shortcuts">
        <kbd>j</kbd>/<kbd>k</kbd> or <kbd>↑</kbd>/<kbd>↓</kbd> move · <kbd>Enter</kbd> open · <kbd>a</kbd> approve ·{' '}
        <kbd>r</kbd> reject · <kbd>e</kbd> edit · <kbd>t</kbd> timeline · <kbd>Esc</kbd> close · <kbd>?</kbd> help
      </footer>
      {help && <Help onClose={() => setHelp(false)} />}
      <div class="sr-only" aria-live="polite" aria-atomic="true" data-testid="announcer">
        {announcement}
      </div>
    </div>
  );
}

/** The card of a call in the list, or of any call the person may see (a link from a timeline or a chat message). */
function CardFor(props: {
  id: string;
  inbox: InboxState;
  api: ReturnType<typeof createApi>;
  me: string;
  roles: readonly string[];
  admin: boolean;
  now: number;
  intent?: Intent;
  isDestructive(c: Approval): boolean;
  /** The tenant's registered tools by name: a tool's input schema makes the card's edit form. */
  tools?: ReadonlyMap<string, Tool>;
  onDecide(c: Approval, b: DecisionBody): Promise<void>;
  onClose(): void;
}) {
  const { id, inbox, api } = props;
  const listed = inbox.items.find((i) => i.id === id);
  const [fetched, setFetched] = useState<Approval | null>(null);
  // A person named on the call alone may read it but not its conversation (404): the card shows the call.
  const [hidden, setHidden] = useState(false);
  const [error, setError] = useState<string>();
  // Opening a listed card fetches the call: the server records when this person was shown it (HITL-03 timing).
  useEffect(() => {
    if (listed) api.toolCall(id).catch(() => undefined);
  }, [id]);
  useEffect(() => {
    if (listed) return;
    let stale = false;
    (async () => {
      const call = await api.toolCall(id);
      const conv = await api.conversation(call.conversationId).catch((e: unknown) => {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      });
      if (stale) return;
      setHidden(conv === null);
      setFetched({
        ...call,
        conversation: conv
          ? { id: conv.id, agentId: conv.agentId, user: conv.user, title: conv.title }
          : { id: call.conversationId, agentId: '', user: null, title: null },
      });
    })().catch(
      (e: unknown) =>
        !stale &&
        setError(e instanceof ApiError && e.status === 404 ? 'No such request, or not one you may see.' : errorText(e)),
    );
    return () => {
      stale = true;
    };
  }, [id, !!listed]);

  const call = listed ?? fetched;
  if (!call) {
    return (
      <div class="loading-card" role="status">
        {error ?? 'Loading…'}{' '}
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
    );
  }
  return (
    <Card
      call={call}
      departure={inbox.gone.get(id)}
      decidable={!!listed}
      conversationShown={
        hidden && !listed ? 'none' : readsConversation({ sub: props.me, roles: props.roles }, call) ? 'all' : 'summary'
      }
      destructive={props.isDestructive(call)}
      inputSchema={props.tools?.get(call.toolName)?.inputSchema}
      now={props.now}
      me={props.me}
      admin={props.admin}
      intent={props.intent}
      onDecide={props.onDecide}
      onStepUp={(c, body) => api.stepUp(c.id, body)}
      onClose={props.onClose}
      // Deciding a whole step goes through the conversation, which a person named on this call alone may not read.
      step={
        listed && readsConversation({ sub: props.me, roles: props.roles }, call) ? stepOf(call, inbox, api) : undefined
      }
    />
  );
}

/** The other pending calls of the card's conversation (its step), to decide them all at once. */
function stepOf(
  call: Approval,
  inbox: InboxState,
  api: ReturnType<typeof createApi>,
): { size: number; decide(d: 'approve' | 'reject'): Promise<string> } | undefined {
  const size = inbox.items.filter((i) => i.conversationId === call.conversationId && !inbox.gone.has(i.id)).length;
  if (size < 2) return undefined;
  return {
    size,
    async decide(d) {
      const r = await api.decideStep(
        call.conversationId,
        d,
        d === 'reject' ? 'rejected with the rest of the step in the web inbox' : undefined,
      );
      const done = `${r.toolCalls.length} ${d === 'approve' ? 'approved' : 'rejected'}`;
      return r.refused.length
        ? `${done}; not decided: ${r.refused.map((x) => `${x.id} (${x.detail})`).join('; ')}`
        : `${done}.`;
    },
  };
}

function Help({ onClose }: { onClose(): void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  return (
    <dialog ref={ref} class="help" aria-labelledby="help-h" onClose={onClose}>
      <h2 id="help-h">Keyboard shortcuts</h2>
      <dl>
        <dt>
          <kbd>j</kbd> <kbd>k</kbd> <kbd>↓</kbd> <kbd>↑</kbd>
        </dt>
        <dd>move through the requests</dd>
        <dt>
          <kbd>Enter</kbd>
        </dt>
        <dd>open the selected request</dd>
        <dt>
          <kbd>a</kbd>
        </dt>
        <dd>
          approve the selected or open request (destructive and manual ones: press twice, with the card open; ones that
          need a passkey open their card, where it signs)
        </dd>
        <dt>
          <kbd>r</kbd>
        </dt>
        <dd>reject it, with a reason</dd>
        <dt>
          <kbd>e</kbd>
        </dt>
        <dd>edit its arguments, then approve</dd>
        <dt>
          <kbd>t</kbd>
        </dt>
        <dd>open its conversation's timeline</dd>
        <dt>
          <kbd>{MOD_KEY}</kbd>+<kbd>Enter</kbd>
        </dt>
        <dd>send the reason, or approve the edited arguments</dd>
        <dt>
          <kbd>Esc</kbd>
        </dt>
        <dd>close, or go back</dd>
      </dl>
      <form method="dialog">
        <button class="primary" autofocus>
          Got it
        </button>
      </form>
    </dialog>
  );
}
