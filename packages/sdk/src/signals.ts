import { abortReason } from './http.js';

/**
 * One signal that aborts when any of `signals` does (AbortSignal.any is missing from some browsers the web
 * inbox supports). `dispose` detaches the listeners once the work is done.
 */
export function anySignal(signals: Array<AbortSignal | undefined>): { signal?: AbortSignal; dispose(): void } {
  const live = signals.filter((s): s is AbortSignal => s !== undefined);
  if (live.length === 0) return { dispose: () => undefined };
  if (live.length === 1) return { signal: live[0], dispose: () => undefined };
  const controller = new AbortController();
  const aborted = live.find((s) => s.aborted);
  if (aborted) {
    controller.abort(abortReason(aborted));
    return { signal: controller.signal, dispose: () => undefined };
  }
  const listeners = live.map((s) => {
    const l = () => controller.abort(abortReason(s));
    s.addEventListener('abort', l, { once: true });
    return () => s.removeEventListener('abort', l);
  });
  return { signal: controller.signal, dispose: () => listeners.forEach((off) => off()) };
}

export function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw abortReason(signal);
}

/** One signal that aborts once every one of `signals` has (never, if any of them is undefined). */
export function anySignalOfAll(signals: Array<AbortSignal | undefined>): { signal?: AbortSignal; dispose(): void } {
  if (signals.length === 0 || signals.some((s) => s === undefined)) return { dispose: () => undefined };
  const all = signals as AbortSignal[];
  const controller = new AbortController();
  const check = () => {
    if (all.every((s) => s.aborted)) controller.abort(abortReason(all[all.length - 1]));
  };
  all.forEach((s) => s.addEventListener('abort', check, { once: true }));
  check();
  return { signal: controller.signal, dispose: () => all.forEach((s) => s.removeEventListener('abort', check)) };
}
