/** How a person or program reached Tollgate; recorded on every decision and event. */
export const CHANNELS = ['policy', 'web', 'cli', 'slack', 'api', 'grpc', 'mcp', 'system', 'push', 'email'] as const;
export type Channel = (typeof CHANNELS)[number];

export type ActorKind = 'person' | 'agent' | 'system';

export interface Actor {
  id: string;
  kind: ActorKind;
  via: Channel;
  name?: string;
  roles?: readonly string[];
  /** The channel's own id of the user a person acted as (a Slack user id), when the channel has one. */
  channelUser?: string;
  /**
   * `client`: a client relayed the person's decision (an answer in an MCP chat), with no proof that a person saw
   * the call. Absent: the person decided in one of Tollgate's own surfaces (inbox, CLI, Slack, API).
   */
  assurance?: 'client';
  /**
   * A delegate's decision: the person whose authority they decided with (their out-of-office delegation). `id` is
   * still the person who acted; this names whom they acted for, as that person's record named them.
   */
  onBehalfOf?: OnBehalfOf;
}

/** The delegator a delegate acted for: their id, and their name as on record. */
export interface OnBehalfOf {
  id: string;
  name?: string;
}

/** How a decision names the delegator it was made for. */
export function onBehalfOfRef(p: { id: string; name?: string }): OnBehalfOf {
  return { id: p.id, ...(p.name ? { name: p.name } : {}) };
}

export const POLICY_ACTOR: Actor = { id: 'policy', kind: 'system', via: 'policy' };
export const SYSTEM_ACTOR: Actor = { id: 'system', kind: 'system', via: 'system' };

/** Who is calling, as established by authentication. */
export interface Principal {
  id: string;
  tenant: string;
  roles: readonly string[];
  name?: string;
  /** The token's `email` claim, when it carries one (an identity provider's). */
  email?: string;
  /** The channel it acts through, when not REST's `api` (gRPC says `grpc`): recorded as the agent's `via`. */
  via?: Channel;
  /** An agent's owner (its token's `owner` claim): the person answerable for it. */
  owner?: string;
  /** The channel's own user id this person acts as (a Slack user linked to them), when they came through one. */
  channelUser?: string;
}

/** A person acting through a channel, as the audit trail records them. */
export function personActor(p: Pick<Principal, 'id' | 'name' | 'roles' | 'channelUser'>, via: Channel): Actor {
  return {
    id: p.id,
    kind: 'person',
    via,
    name: p.name,
    roles: p.roles,
    ...(p.channelUser ? { channelUser: p.channelUser } : {}),
    // An MCP client answers its chat form itself: what it relays is recorded as such, never as a person seen deciding.
    ...(via === 'mcp' ? { assurance: 'client' as const } : {}),
  };
}

/** An agent acting through a channel (default `api`), as the audit trail records it. */
export function agentActor(id: string, name?: string, via: Channel = 'api'): Actor {
  return { id, kind: 'agent', via, roles: ['agent'], ...(name ? { name } : {}) };
}

/** Agent tokens can never decide, whatever their other roles: approval comes from people. */
export function isAgent(p: Principal): boolean {
  return p.roles.includes('agent');
}

export function hasAnyRole(p: Principal, roles: readonly string[]): boolean {
  return p.roles.some((r) => roles.includes(r));
}
