/** How a person or program reached Tollgate; recorded on every decision and event. */
export const CHANNELS = ['policy', 'web', 'cli', 'slack', 'api', 'grpc', 'mcp', 'system'] as const;
export type Channel = (typeof CHANNELS)[number];

export type ActorKind = 'person' | 'agent' | 'system';

export interface Actor {
  id: string;
  kind: ActorKind;
  via: Channel;
  name?: string;
  roles?: readonly string[];
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
}

/** A person acting through a channel, as the audit trail records them. */
export function personActor(p: Pick<Principal, 'id' | 'name' | 'roles'>, via: Channel): Actor {
  return { id: p.id, kind: 'person', via, name: p.name, roles: p.roles };
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
