import { AggregateRoot } from '../shared/aggregate-root';
import { Actor } from '../shared/actor';
import type { ValidationFault } from '../shared/domain-error';
import type { GrantFacts, GrantScope } from '../policy/approval-policy';
import { ToolPattern } from '../policy/tool-pattern';
import { GrantCreated, GrantRevoked, GrantUsed } from './grant.events';

export const GRANT_SCOPES: readonly GrantScope[] = ['conversation', 'agent', 'tenant'];
export const GRANT_STATUSES = ['active', 'revoked', 'expired', 'spent'] as const;
/** `allow`: a grant (turns `confirm` into `automatic`); `deny`: a standing deny (turns matching calls into `deny`). */
export const GRANT_EFFECTS = ['allow', 'deny'] as const;
export type GrantEffect = (typeof GRANT_EFFECTS)[number];
/** The most calls a limited grant (`uses`) may let through. */
export const MAX_GRANT_USES = 1000;
export type GrantStatus = (typeof GRANT_STATUSES)[number];

/** The longest lifetime an `always_allow` may give a grant: 90 days. Without `expiresIn` a grant has none. */
export const MAX_GRANT_SECONDS = 90 * 24 * 3600;
/** At most this many argument globs on one grant, each at most MAX_GRANT_GLOB_LENGTH characters. */
export const MAX_GRANT_ARGS = 16;
export const MAX_GRANT_GLOB_LENGTH = 512;
const ARG_NAME = /^[\w$.-]{1,128}$/;
const ARG_SEPARATOR = /,\s*[\w$.-]+\s*=/;
/** Argument names as policy patterns accept them (`tool(name=glob)`). */
/** A comma followed by `name=` would start another argument in the pattern text: refused rather than misread. */

export interface GrantRevocation {
  at: Date;
  by: { id: string; name?: string; via: string };
  reason?: string;
}

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
  /** Argument name → glob: the grant covers only calls whose arguments all match. */
  args?: Record<string, string>;
  /** After this instant the grant no longer applies. */
  expiresAt?: Date;
  revocation?: GrantRevocation;
  /** `deny`: a standing deny (absent: an allow). */
  effect?: GrantEffect;
  /** An allow that lets at most this many calls through (absent: any number), and how many it still may. */
  uses?: number;
  usesLeft?: number;
}

/** What is wrong with a grant's `uses`, or undefined: a whole number from 1 to MAX_GRANT_USES. */
export function usesFault(uses: unknown): string | undefined {
  if (typeof uses !== 'number' || !Number.isInteger(uses) || uses < 1 || uses > MAX_GRANT_USES)
    return `must be a whole number from 1 to ${MAX_GRANT_USES}`;
  return undefined;
}

/** What is wrong with a requested lifetime in seconds, or undefined. */
export function expiresInFault(seconds: unknown): string | undefined {
  if (typeof seconds !== 'number' || !Number.isInteger(seconds)) return 'must be a whole number of seconds';
  if (seconds < 1 || seconds > MAX_GRANT_SECONDS) return `must be from 1 to ${MAX_GRANT_SECONDS} seconds (90 days)`;
  return undefined;
}

/** What is wrong with an argument pattern (`path` prefixes each fault), or an empty list. */
export function grantArgsFaults(args: unknown, path = 'args'): ValidationFault[] {
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    return [{ path, message: 'must be an object of argument name → glob' }];
  const entries = Object.entries(args);
  if (entries.length === 0)
    return [{ path, message: 'must name at least one argument; leave it out to cover any arguments' }];
  if (entries.length > MAX_GRANT_ARGS) return [{ path, message: `may name at most ${MAX_GRANT_ARGS} arguments` }];
  const faults: ValidationFault[] = [];
  for (const [name, glob] of entries) {
    const at = `${path}.${name}`;
    if (!ARG_NAME.test(name))
      faults.push({ path: at, message: 'argument names are letters, digits, _, $, . and - (at most 128)' });
    else if (typeof glob !== 'string' || glob === '')
      faults.push({ path: at, message: 'must be a non-empty glob string' });
    else if (glob.length > MAX_GRANT_GLOB_LENGTH)
      faults.push({ path: at, message: `must be at most ${MAX_GRANT_GLOB_LENGTH} characters` });
    else if (glob.trim() !== glob) faults.push({ path: at, message: 'must not start or end with whitespace' });
    else if (ARG_SEPARATOR.test(glob)) faults.push({ path: at, message: 'must not hold a comma followed by name=' });
  }
  if (faults.length === 0) {
    try {
      argsPattern('x', args as Record<string, string>).selfCheck();
    } catch (e) {
      faults.push({ path, message: (e as Error).message });
    }
  }
  return faults;
}

function argsPattern(toolName: string, args: Record<string, string>): ToolPattern {
  const inner = Object.entries(args)
    .map(([name, glob]) => `${name}=${glob}`)
    .join(', ');
  return ToolPattern.parse(`${toolName}(${inner})`);
}
/** The args as a policy pattern `tool(a=glob, b=glob)`, compiled by the policy's own glob language. */

/** The readable form of a grant's coverage, as in a policy rule: `shell(cmd=ls *)`, or the tool name alone. */
export function grantPatternText(toolName: string, args: Record<string, string> | undefined): string {
  if (!args) return toolName;
  return `${toolName}(${Object.entries(args)
    .map(([n, g]) => `${n}=${g}`)
    .join(', ')})`;
}

/** A standing permission born of an `always_allow` decision: it turns `confirm` into `automatic`. */
export class Grant extends AggregateRoot {
  private matcher?: ToolPattern;

  private constructor(private s: GrantState) {
    super(s.tenantId, 0);
  }

  static rehydrate(state: GrantState): Grant {
    return new Grant(state);
  }

  static create(input: {
    id: string;
    tenantId: string;
    toolName: string;
    scope: GrantScope;
    conversationId: string;
    agentId: string;
    by: Actor;
    toolCallId: string;
    at: Date;
    /** Seconds the grant lives; checked by `expiresInFault` first. */
    expiresIn?: number;
    /** Argument globs; checked by `grantArgsFaults` first. */
    args?: Record<string, string>;
    /** `deny`: a standing deny (default `allow`). */
    effect?: GrantEffect;
    /** An allow only: the calls it may let through; checked by `usesFault` first. */
    uses?: number;
  }): Grant {
    const deny = input.effect === 'deny';
    const uses = deny ? undefined : input.uses;
    const scopeId =
      input.scope === 'conversation' ? input.conversationId : input.scope === 'agent' ? input.agentId : undefined;
    const expiresAt = input.expiresIn === undefined ? undefined : new Date(input.at.getTime() + input.expiresIn * 1000);
    const args = input.args && { ...input.args };
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
      ...(args ? { args } : {}),
      ...(expiresAt ? { expiresAt } : {}),
      ...(deny ? { effect: 'deny' as const } : {}),
      ...(uses !== undefined ? { uses, usesLeft: uses } : {}),
    });
    g.record(
      new GrantCreated(
        {
          tenantId: input.tenantId,
          at: input.at,
          actor: input.by,
          conversationId: input.conversationId,
          toolCallId: input.toolCallId,
          toolName: input.toolName,
        },
        {
          grantId: input.id,
          scope: input.scope,
          scopeId: scopeId ?? null,
          createdBy: input.by.id,
          via: input.by.via,
          ...(args ? { args } : {}),
          ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}),
          ...(deny ? { effect: 'deny' as const } : {}),
          ...(uses !== undefined ? { uses } : {}),
        },
      ),
    );
    return g;
  }

  get id(): string {
    return this.s.id;
  }

  get scope(): GrantScope {
    return this.s.scope;
  }

  snapshot(): Readonly<GrantState> {
    return this.s;
  }

  get effect(): GrantEffect {
    return this.s.effect ?? 'allow';
  }

  /** Revoked wins over expired, expired over spent: the person's act is what the record should show. */
  statusAt(now: Date): GrantStatus {
    if (this.s.revocation) return 'revoked';
    if (this.s.expiresAt && this.s.expiresAt.getTime() <= now.getTime()) return 'expired';
    if (this.s.usesLeft !== undefined && this.s.usesLeft <= 0) return 'spent';
    return 'active';
  }

  /**
   * A limited allow let `toolCallIds` through, `usesLeft` remaining after them (as the store counted them down,
   * atomically): one GrantUsed per call, in the call's own transaction.
   */
  used(toolCallIds: readonly string[], usesLeft: number, by: Actor, at: Date, conversationId: string): void {
    if (this.s.uses === undefined) return;
    this.s = { ...this.s, usesLeft };
    toolCallIds.forEach((toolCallId, i) =>
      this.record(
        new GrantUsed(
          { tenantId: this.s.tenantId, at, actor: by, conversationId, toolCallId, toolName: this.s.toolName },
          { grantId: this.s.id, uses: this.s.uses!, usesLeft: usesLeft + (toolCallIds.length - 1 - i) },
        ),
      ),
    );
  }

  /**
   * Revokes the grant at once. Revoking a revoked grant changes nothing and records nothing (answers false):
   * the first revocation, its author and reason stand. An expired grant may still be revoked, for the record.
   */
  revoke(by: Actor, at: Date, reason?: string): boolean {
    if (this.s.revocation) return false;
    this.s = {
      ...this.s,
      revocation: {
        at,
        by: { id: by.id, via: by.via, ...(by.name ? { name: by.name } : {}) },
        ...(reason ? { reason } : {}),
      },
    };
    const scopeId =
      this.s.scope === 'conversation' ? this.s.conversationId : this.s.scope === 'agent' ? this.s.agentId : undefined;
    this.record(
      new GrantRevoked(
        {
          tenantId: this.s.tenantId,
          at,
          actor: by,
          ...(this.s.conversationId ? { conversationId: this.s.conversationId } : {}),
          toolName: this.s.toolName,
        },
        {
          grantId: this.s.id,
          scope: this.s.scope,
          scopeId: scopeId ?? null,
          revokedBy: by.id,
          via: by.via,
          ...(reason ? { reason } : {}),
        },
      ),
    );
    return true;
  }

  /**
   * The grant as the policy sees it (which ignores it once revoked or expired). A standing deny reads as revoked
   * here, so that one passed among the grants by mistake never allows anything (fail closed): see `denyFacts`.
   */
  facts(): GrantFacts {
    if (this.effect === 'deny') return { ...this.coverage(), revoked: true };
    return this.coverage();
  }

  /** A standing deny as the policy sees it (`ctx.denies`); undefined for an allow. */
  denyFacts(): GrantFacts | undefined {
    return this.effect === 'deny' ? this.coverage() : undefined;
  }

  private coverage(): GrantFacts {
    if (this.s.args && !this.matcher) this.matcher = argsPattern(this.s.toolName, this.s.args);
    return {
      id: this.s.id,
      toolName: this.s.toolName,
      scope: this.s.scope,
      conversationId: this.s.conversationId,
      agentId: this.s.agentId,
      ...(this.matcher ? { arguments: this.matcher } : {}),
      ...(this.s.revocation ? { revoked: true } : {}),
      ...(this.s.expiresAt ? { expiresAt: this.s.expiresAt } : {}),
    };
  }
}
