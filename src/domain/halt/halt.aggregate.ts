import { AggregateRoot } from '../shared/aggregate-root';
import { Actor } from '../shared/actor';
import { ValidationError } from '../shared/domain-error';
import { BaseEvent } from '../shared/event-base';

export const HALT_SCOPES = ['tenant', 'agent', 'conversation'] as const;
export type HaltScope = (typeof HALT_SCOPES)[number];

/** What a halt covers: the whole tenant, one agent (its `sub`) or one conversation. */
export interface HaltTarget {
  scope: HaltScope;
  /** Empty for the tenant scope. */
  id: string;
}

export interface HaltState extends HaltTarget {
  tenantId: string;
  reason: string;
  by: { id: string; name?: string; via: string };
  at: Date;
}

export class Halted extends BaseEvent<{ scope: HaltScope; id: string | null; reason: string }> {
  readonly type = 'Halted' as const;
}

export class Resumed extends BaseEvent<{
  scope: HaltScope;
  id: string | null;
  reason?: string;
  haltedAt: string;
  haltReason: string;
}> {
  readonly type = 'Resumed' as const;
}

/** Checks the target's shape: the tenant scope takes no id, the others need one. */
export function haltTarget(scope: HaltScope, id: string | undefined): HaltTarget {
  if (scope === 'tenant') {
    if (id) throw new ValidationError([{ path: 'id', message: 'must be left out for scope "tenant"' }]);
    return { scope, id: '' };
  }
  if (!id) throw new ValidationError([{ path: 'id', message: `is required for scope "${scope}"` }]);
  return { scope, id };
}

/**
 * The kill switch: while a halt is in force, new proposals and claims in its scope are refused.
 * Cancelling the open calls is the Conversation's job; the halt records who pulled it and why.
 */
export class Halt extends AggregateRoot {
  private resumed = false;

  private constructor(
    private readonly s: HaltState,
    version: number,
  ) {
    super(s.tenantId, version);
  }

  static rehydrate(state: HaltState): Halt {
    return new Halt(state, 1);
  }

  static pull(input: { tenantId: string; target: HaltTarget; reason: string; by: Actor; at: Date }): Halt {
    const h = new Halt(
      {
        tenantId: input.tenantId,
        ...input.target,
        reason: input.reason,
        by: { id: input.by.id, via: input.by.via, ...(input.by.name ? { name: input.by.name } : {}) },
        at: input.at,
      },
      0,
    );
    h.record(
      new Halted(h.envelope(input.by, input.at), { scope: h.s.scope, id: h.s.id || null, reason: input.reason }),
    );
    return h;
  }

  resume(by: Actor, at: Date, reason?: string): void {
    if (this.resumed) return;
    this.resumed = true;
    this.record(
      new Resumed(this.envelope(by, at), {
        scope: this.s.scope,
        id: this.s.id || null,
        ...(reason ? { reason } : {}),
        haltedAt: this.s.at.toISOString(),
        haltReason: this.s.reason,
      }),
    );
  }

  get isResumed(): boolean {
    return this.resumed;
  }

  snapshot(): Readonly<HaltState> {
    return this.s;
  }

  private envelope(actor: Actor, at: Date) {
    return {
      tenantId: this.s.tenantId,
      at,
      actor,
      ...(this.s.scope === 'conversation' ? { conversationId: this.s.id } : {}),
    };
  }
}
