/** Words and numbers as the inbox shows them. Pure functions: tested without a browser. */

const CHANNELS: Record<string, string> = {
  web: 'the web inbox',
  slack: 'Slack',
  cli: 'the CLI',
  api: 'the API',
  grpc: 'gRPC',
  mcp: 'an MCP chat',
  policy: 'policy',
  system: 'the system',
};

export function channelName(via: string | undefined): string {
  return via ? (CHANNELS[via] ?? via) : 'an unknown channel';
}

/** "4 min 05 s", "1 h 20 min", "12 s". */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${String(m % 60).padStart(2, '0')} min`;
  return `${Math.floor(h / 24)} days`;
}

/** What is left before a pending call expires: "4 min 05 s left", or "expiring…" once due. */
export function timeLeft(expiresAt: string | undefined, now: number): string {
  if (!expiresAt) return 'no expiry';
  const ms = Date.parse(expiresAt) - now;
  return ms <= 0 ? 'expiring…' : `${duration(ms)} left`;
}

export function ago(at: string, now: number): string {
  const ms = now - Date.parse(at);
  return ms < 5000 ? 'just now' : `${duration(ms)} ago`;
}

/** A local date-time a person reads at a glance: "14:03:12" today, else "3 Mar 14:03". */
export function clock(at: string, now = Date.now()): string {
  const d = new Date(at);
  const today = new Date(now).toDateString() === d.toDateString();
  const time = d.toLocaleTimeString(undefined, {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hour12: false,
  });
  return today ? time : `${d.toLocaleDateString(undefined, { day: 'numeric', month: 'short' })} ${time}`;
}

export const LEVEL_WORDS: Record<string, string> = {
  deny: 'Denied by policy',
  manual: 'Manual — a person must approve every time',
  confirm: 'Confirm — a person must approve',
  notify: 'Notify — runs, approvers are told',
  automatic: 'Automatic',
};

export function ruleText(rule: number | null, version: number): string {
  return `${rule === null ? 'no rule matched' : `rule ${rule}`} · policy v${version}`;
}

export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'null';
}

/** Checks the JSON editor's text: the arguments must be one JSON object. */
export function parseArguments(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `Not valid JSON: ${(e as Error).message}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, error: 'The arguments must be a JSON object: { … }' };
  return { ok: true, value: value as Record<string, unknown> };
}

/** "by ann via Slack", "by you via the web inbox", "by bob for ann via email", "by policy". */
export function decidedBy(
  by: { id: string; name?: string; via: string; onBehalfOf?: { id: string; name?: string } },
  me: string,
): string {
  if (by.via === 'policy') return 'by policy';
  if (by.via === 'system') return 'by the system';
  const behalf = by.onBehalfOf
    ? ` for ${by.onBehalfOf.id === me ? 'you' : (by.onBehalfOf.name ?? by.onBehalfOf.id)}`
    : '';
  return `by ${by.id === me ? 'you' : (by.name ?? by.id)}${behalf} via ${channelName(by.via)}`;
}

/** "approved by ann via Slack: looks right", "expired without a decision". */
export function decisionSentence(
  d: { outcome: string; by: { id: string; name?: string; via: string }; reason?: string; response?: string },
  me: string,
): string {
  if (d.outcome === 'expired') return 'expired without a decision';
  // `respond`: the tool did not run; the person answered the agent instead.
  if (d.response !== undefined) return `answered instead ${decidedBy(d.by, me)}: ${d.response}`;
  return `${d.outcome} ${decidedBy(d.by, me)}${d.reason ? `: ${d.reason}` : ''}`;
}

export const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
