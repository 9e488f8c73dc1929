import { AggregateRoot } from '../shared/aggregate-root';
import { Actor, Principal } from '../shared/actor';
import { BaseEvent } from '../shared/event-base';
import type { GrantFacts, GrantLimit, GrantScope } from '../policy/approval-policy';

export const GRANT_SCOPES: readonly GrantScope[] = ['conversation', 'agent', 'tenant'];

export interface GrantState {
  id: string;
  tenantId: string;
  toolName: string;
  scope: GrantScope;
  conversationId?: string;
  agentId?: string;
  createdBy: { id: string; name?: string; via: string };
  sourceToolCallId: string;
  createdAt: Date;
}

/**
 * The widest standing grant a person's roles allow: a grant beyond one conversation lets calls of other
 * agents and other users through, so only an admin may make one. An approver or the requester may make
 * a grant for the conversation they decide in. (Agents never decide at all.)
 */
export function widestGrantFor(p: Pick<Principal, 'roles'>): GrantLimit {
  return p.roles.includes('admin') ? 'tenant' : 'conversation';
}

export class GrantCreated extends BaseEvent<{ grantId: string; scope: GrantScope; scopeId: string | null; createdBy: string; via: string }> {
  readonly type = 'GrantCreated' as const;
}

/** A standing permission born of an `always_allow` decision: it turns `confirm` into `automatic`. */
export class Grant extends AggregateRoot {
  private constructor(private readonly s: GrantState) {
    super(s.tenantId, 0);
  }

  static rehydrate(state: GrantState): Grant {
    return new Grant(state);
  }

  static create(input: { id: string; tenantId: string; toolName: string; scope: GrantScope; conversationId: string; agentId: string; by: Actor; toolCallId: string; at: Date }): Grant {
    const scopeId = input.scope === 'conversation' ? input.conversationId : input.scope === 'agent' ? input.agentId : undefined;
    const g = new Grant({
      id: input.id,
      tenantId: input.tenantId,
      toolName: input.toolName,
      scope: input.scope,
      conversationId: input.scope === 'conversation' ? input.conversationId : undefined,
      agentId: input.scope === 'agent' ? input.agentId : undefined,
      createdBy: { id: input.by.id, via: input.by.via, ...(input.by.name ? { name: input.by.name } : {}) },
      sourceToolCallId: input.toolCallId,
      createdAt: input.at,
    });
    g.record(
      new GrantCreated(
        { tenantId: input.tenantId, at: input.at, actor: input.by, conversationId: input.conversationId, toolCallId: input.toolCallId, toolName: input.toolName },
        { grantId: input.id, scope: input.scope, scopeId: scopeId ?? null, createdBy: input.by.id, via: input.by.via },
      ),
    );
    return g;
  }

  snapshot(): Readonly<GrantState> {
    return this.s;
  }

  facts(): GrantFacts {
    return { id: this.s.id, toolName: this.s.toolName, scope: this.s.scope, conversationId: this.s.conversationId, agentId: this.s.agentId };
  }
}
