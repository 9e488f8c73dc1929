import { useEffect, useRef, useState } from 'preact/hooks';

/** The current time, re-rendered every `ms`. */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

export type Route =
  | { view: 'inbox' }
  | { view: 'call'; id: string }
  | { view: 'conversation'; id: string }
  | { view: 'passkeys' }
  | { view: 'settings' };

export function parseRoute(hash: string): Route {
  if (hash === '#/passkeys') return { view: 'passkeys' };
  if (hash === '#/settings') return { view: 'settings' };
  const m = /^#\/(calls|conversations)\/([^/?#]+)$/.exec(hash);
  if (!m) return { view: 'inbox' };
  const id = decodeURIComponent(m[2]);
  return m[1] === 'calls' ? { view: 'call', id } : { view: 'conversation', id };
}

export const hrefFor = (r: Route): string =>
  r.view === 'inbox'
    ? '#/'
    : r.view === 'passkeys' || r.view === 'settings'
      ? `#/${r.view}`
      : `#/${r.view === 'call' ? 'calls' : 'conversations'}/${encodeURIComponent(r.id)}`;

/**
 * Hash routes (`#/`, `#/calls/{id}`, `#/conversations/{id}`, `#/passkeys`, `#/settings`): deep links work and the
 * server serves one page.
 */
export function useRoute(): [Route, (r: Route) => void] {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return [route, (r) => (location.hash = hrefFor(r))];
}

/** True while typing, where letters are text and not shortcuts. */
export function isTyping(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return !!t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName));
}

export const hasModifier = (e: KeyboardEvent): boolean => e.ctrlKey || e.metaKey || e.altKey;

/** The key people press with Enter to send: ⌘ on Apple systems, Ctrl elsewhere (both work everywhere). */
export const MOD_KEY = /Mac|iPhone|iPad/.test(navigator.userAgent) ? '⌘' : 'Ctrl';

/**
 * Ctrl+Enter or ⌘+Enter in a text box sends its form, as in mail and chat; Enter alone stays a new line. The form's
 * own submit handler decides whether it may be sent, so the rules are those of its button.
 */
export function submitOnModEnter(e: KeyboardEvent): void {
  if (e.key !== 'Enter' || !(e.ctrlKey || e.metaKey) || e.isComposing) return;
  const form = (e.currentTarget as HTMLTextAreaElement | null)?.form;
  if (!form) return;
  e.preventDefault();
  form.requestSubmit();
}

/**
 * A document keydown listener that always runs the latest handler. Preact runs effects after paint, so a listener
 * re-registered by an effect could still see the previous render's state when keys come quickly.
 */
export function useKeydown(handler: (e: KeyboardEvent) => void, capture = false): void {
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => {
    const on = (e: KeyboardEvent) => latest.current(e);
    document.addEventListener('keydown', on, capture);
    return () => document.removeEventListener('keydown', on, capture);
  }, [capture]);
}

/**
 * What the page loads, again on `reload()` or when `deps` change: the last answer (null until the first), or why
 * loading failed (`failure` words the error). An answer that arrives after the page moved on is dropped.
 */
export function useLoad<T>(
  load: () => Promise<T>,
  failure: (e: unknown) => string,
  deps: readonly unknown[],
): { value: T | null; error?: string; reload: () => void } {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<string>();
  const [round, setRound] = useState(0);
  useEffect(() => {
    let stale = false;
    load().then(
      (v) => {
        if (stale) return;
        setValue(v);
        setError(undefined);
      },
      (e: unknown) => !stale && setError(failure(e)),
    );
    return () => {
      stale = true;
    };
  }, [...deps, round]);
  return { value, error, reload: () => setRound((n) => n + 1) };
}
