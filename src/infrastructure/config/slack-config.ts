/** The Slack approver's settings (SLACK_*, TOLLGATE_SLACK_*), read by loadConfig. */
import { ConfigError } from './config-error';
import { spanSeconds } from './duration';

export interface SlackConfig {
  botToken: string;
  signingSecret: string;
  /** Channel id (or name) the approval requests are posted to. */
  channel: string;
  /** Web API base URL, e.g. https://slack.com/api/ (tests point it at a stand-in). */
  apiUrl: string;
  /** The tenant whose requests Slack shows and in which Slack approvers act. */
  tenant: string;
  /**
   * Slack user id → the id of the Tollgate person it is (TOLLGATE_SLACK_APPROVERS="U777=ann,U888=bob"). A person's
   * roles come from their person record, never from here; Slack users not named are linked by verified email.
   */
  people: Record<string, string>;
  /**
   * One Slack app for several tenants (TOLLGATE_SLACK_TENANTS="acme=C0ACME,globex=C0GLOBEX"): each tenant's requests
   * go to its own channel, and a click acts in the tenant whose request the message is. Unset: `tenant` → `channel`.
   */
  routes?: Record<string, string>;
  /** Links of TOLLGATE_SLACK_APPROVERS that name their tenant (`acme:U777=ann`): tenant → Slack user → person. */
  tenantPeople?: Record<string, Record<string, string>>;
  /**
   * How old a person's last sign-in may be for them to decide or answer in Slack (TOLLGATE_PERSON_MAX_AGE,
   * seconds or a span such as `7d`). Slack never re-authenticates anyone: past this, the roles on record may be
   * ones the identity provider has since taken away. Undefined (a hand-made config): DEFAULT_PERSON_MAX_AGE_SECONDS.
   */
  personMaxAgeSeconds?: number;
}

/** A week: people who use Tollgate sign in far more often, and a removed admin is out of Slack within it. */
export const DEFAULT_PERSON_MAX_AGE_SECONDS = 7 * 86_400;
/**
 * Ten minutes at least: a person's `last_seen_at` is refreshed at most every 5 minutes (PersonSightings), so less
 * would refuse people who are using Tollgate right now. A year at most: more keeps roles a provider took away.
 */
const MIN_PERSON_MAX_AGE_SECONDS = 600;
const MAX_PERSON_MAX_AGE_SECONDS = 366 * 86_400;

const SLACK_REQUIRED = ['SLACK_BOT_TOKEN', 'SLACK_SIGNING_SECRET', 'SLACK_CHANNEL'] as const;

/**
 * All three Slack settings or none: a half-configured Slack would silently ask no one. TOLLGATE_SLACK_TENANTS may
 * stand in for SLACK_CHANNEL (each tenant names its own channel).
 */
export function slackConfig(env: NodeJS.ProcessEnv): SlackConfig | undefined {
  const routes = env.TOLLGATE_SLACK_TENANTS?.trim() ? parseSlackTenants(env.TOLLGATE_SLACK_TENANTS) : undefined;
  const missing = SLACK_REQUIRED.filter((k) => !env[k] && !(k === 'SLACK_CHANNEL' && routes));
  if (missing.length === SLACK_REQUIRED.length) return undefined;
  if (missing.length > 0)
    throw new ConfigError(`Slack needs ${SLACK_REQUIRED.join(', ')}; missing: ${missing.join(', ')}`);
  if (routes && (env.SLACK_CHANNEL || env.TOLLGATE_SLACK_TENANT))
    throw new ConfigError(
      'Set either TOLLGATE_SLACK_TENANTS (tenant=channel, …) or SLACK_CHANNEL with TOLLGATE_SLACK_TENANT, not both',
    );
  const apiUrl = env.SLACK_API_URL || 'https://slack.com/api/';
  if (!/^https?:\/\//.test(apiUrl)) throw new ConfigError(`SLACK_API_URL must be an http(s) URL, got "${apiUrl}"`);
  const [first] = Object.entries(routes ?? {});
  const links = parseSlackLinks(env.TOLLGATE_SLACK_APPROVERS ?? '');
  // Serving several tenants, a link for all of them would make one Slack user a person in each: refused.
  if (routes && Object.keys(links.all).length)
    throw new ConfigError(
      `TOLLGATE_SLACK_APPROVERS: with TOLLGATE_SLACK_TENANTS each link names its tenant (acme:${Object.keys(links.all)[0]}=<person id>), so a Slack user is a person in the tenants named only`,
    );
  const served = routes ?? { [env.TOLLGATE_SLACK_TENANT || 'default']: env.SLACK_CHANNEL! };
  for (const tenant of Object.keys(links.byTenant))
    if (!Object.hasOwn(served, tenant))
      throw new ConfigError(
        `TOLLGATE_SLACK_APPROVERS links people in tenant "${tenant}", which Slack does not serve (TOLLGATE_SLACK_TENANTS)`,
      );
  return {
    botToken: env.SLACK_BOT_TOKEN!,
    signingSecret: env.SLACK_SIGNING_SECRET!,
    channel: first ? first[1] : env.SLACK_CHANNEL!,
    apiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`,
    tenant: first ? first[0] : env.TOLLGATE_SLACK_TENANT || 'default',
    people: links.all,
    ...(Object.keys(links.byTenant).length ? { tenantPeople: links.byTenant } : {}),
    ...(routes ? { routes } : {}),
    personMaxAgeSeconds: personMaxAge(env.TOLLGATE_PERSON_MAX_AGE),
  };
}

/** The tenants Slack serves and the channel of each. */
export function slackRoutes(c: Pick<SlackConfig, 'routes' | 'tenant' | 'channel'>): Record<string, string> {
  return c.routes ?? { [c.tenant]: c.channel };
}

/** The person a Slack user is linked to in `tenant` by the settings: a link naming the tenant first, else one for all. */
export function slackLinkIn(
  c: Pick<SlackConfig, 'people' | 'tenantPeople'>,
  tenant: string,
  user: string,
): string | undefined {
  const own = c.tenantPeople?.[tenant];
  if (own && Object.hasOwn(own, user)) return own[user];
  return Object.hasOwn(c.people, user) ? c.people[user] : undefined;
}

const TENANT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** A channel id (C…, G…) or a name (#approvals): what chat.postMessage takes. */
const CHANNEL = /^(#[a-z0-9][a-z0-9._-]{0,79}|[CGD][A-Z0-9]{1,31})$/;
const MAX_TENANTS = 1000;

/** `acme=C0ACME,globex=#globex-approvals`: each tenant once, each channel for one tenant only. */
export function parseSlackTenants(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  const owner = new Map<string, string>();
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length > MAX_TENANTS)
    throw new ConfigError(`TOLLGATE_SLACK_TENANTS: at most ${MAX_TENANTS} tenants, got ${entries.length}`);
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    const tenant = eq < 0 ? '' : entry.slice(0, eq).trim();
    const channel = eq < 0 ? '' : entry.slice(eq + 1).trim();
    if (!TENANT.test(tenant) || !CHANNEL.test(channel))
      throw new ConfigError(
        `TOLLGATE_SLACK_TENANTS: "${entry}" is not <tenant>=<channel id or #name>, e.g. acme=C0123ABC or acme=#acme-approvals`,
      );
    if (Object.hasOwn(out, tenant)) throw new ConfigError(`TOLLGATE_SLACK_TENANTS names tenant "${tenant}" twice`);
    if (owner.has(channel))
      throw new ConfigError(
        `TOLLGATE_SLACK_TENANTS: channel ${channel} is given to "${owner.get(channel)}" and "${tenant}": a channel's people decide for one tenant`,
      );
    out[tenant] = channel;
    owner.set(channel, tenant);
  }
  return out;
}

/** TOLLGATE_PERSON_MAX_AGE: seconds, or a span (`12h`, `7d`, `2w`); between ten minutes and a year. */
export function personMaxAge(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return DEFAULT_PERSON_MAX_AGE_SECONDS;
  const s = spanSeconds(raw, { bare: true });
  if (s === undefined || s < MIN_PERSON_MAX_AGE_SECONDS || s > MAX_PERSON_MAX_AGE_SECONDS)
    throw new ConfigError(
      `TOLLGATE_PERSON_MAX_AGE must be seconds or a span like 7d, from ${MIN_PERSON_MAX_AGE_SECONDS} (10 minutes) to ${MAX_PERSON_MAX_AGE_SECONDS} (366 days), got "${raw}"`,
    );
  return s;
}

/** Bounds: a Slack user id is short; a person id is a token's `sub` (OIDC allows up to 255 characters). */
const SLACK_USER = /^[A-Z0-9]{1,32}$/;
const MAX_PERSON_ID = 255;
const MAX_ENTRIES = 10_000;

/**
 * `U777=ann,U888=bob`: each Slack user linked to one Tollgate person (the person id is their token's `sub`).
 * The old `U777:admin` form gave a Slack user roles of its own, so a person could be two deciders at once (their
 * token and their Slack user) and pass separation of duties and quorums alone; it is refused with the new form.
 */
export function parseSlackApprovers(raw: string): Record<string, string> {
  const links = parseSlackLinks(raw);
  if (Object.keys(links.byTenant).length)
    throw new ConfigError(
      'TOLLGATE_SLACK_APPROVERS: a link naming its tenant (acme:U777=ann) needs TOLLGATE_SLACK_TENANTS',
    );
  return links.all;
}

/**
 * TOLLGATE_SLACK_APPROVERS with links for every tenant (`U777=ann`) and for one (`acme:U777=ann`, when one Slack
 * user is a different person in each tenant Slack serves).
 */
export function parseSlackLinks(raw: string): {
  all: Record<string, string>;
  byTenant: Record<string, Record<string, string>>;
} {
  const all: Record<string, string> = {};
  const byTenant: Record<string, Record<string, string>> = {};
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length > MAX_ENTRIES)
    throw new ConfigError(`TOLLGATE_SLACK_APPROVERS: at most ${MAX_ENTRIES} Slack users, got ${entries.length}`);
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    if (eq < 0) {
      const old = /^([A-Z0-9]+):/i.exec(entry);
      throw new ConfigError(
        old
          ? `TOLLGATE_SLACK_APPROVERS: "${entry}" is the old <Slack user>:<role> form. Slack users are now linked to ` +
              `Tollgate persons, whose roles come from their person record (their sign-in), so one person is one ` +
              `decider in every channel: write <Slack user id>=<person id>, e.g. ${old[1]}=<person id>`
          : `TOLLGATE_SLACK_APPROVERS: "${entry}" is not <Slack user id>=<person id>, e.g. U777=ann`,
      );
    }
    const left = entry.slice(0, eq).trim();
    const colon = left.indexOf(':');
    const tenant = colon < 0 ? undefined : left.slice(0, colon).trim();
    const user = colon < 0 ? left : left.slice(colon + 1).trim();
    const person = entry.slice(eq + 1).trim();
    if (tenant !== undefined && !TENANT.test(tenant))
      throw new ConfigError(`TOLLGATE_SLACK_APPROVERS: "${tenant}" in "${entry}" is not a tenant id`);
    const out = tenant === undefined ? all : (byTenant[tenant] ??= {});
    if (!SLACK_USER.test(user))
      throw new ConfigError(`TOLLGATE_SLACK_APPROVERS: "${user}" is not a Slack user id (like U0123ABC)`);
    if (!person || person.length > MAX_PERSON_ID || /[\s,=]/.test(person))
      throw new ConfigError(
        `TOLLGATE_SLACK_APPROVERS: "${entry}": the person id must be 1-${MAX_PERSON_ID} characters without spaces`,
      );
    if (out[user] !== undefined && out[user] !== person)
      throw new ConfigError(
        `TOLLGATE_SLACK_APPROVERS: ${user} is linked to both "${out[user]}" and "${person}"; a Slack user is one person`,
      );
    out[user] = person;
  }
  return { all, byTenant };
}
