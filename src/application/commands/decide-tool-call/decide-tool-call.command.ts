import { Command } from '@nestjs/cqrs';
import { Decider, DecisionInput } from '../../../domain/conversation/conversation.aggregate';
import { expiresInFault, grantArgsFaults, usesFault } from '../../../domain/grant/grant.aggregate';
import { ValidationError, ValidationFault } from '../../../domain/shared/domain-error';
import { MAX_RESPONSE_LENGTH } from '../../../domain/conversation/rules/allowed-decisions';
import type { WebAuthnJson } from '../../ports/passkey.port';
import type { ToolCallView } from '../../views/views';

/** always_allow only: what limits the standing grant it makes. */
export interface GrantOptions {
  /** Seconds the grant lives (1 s to 90 days); without it, until revoked. */
  expiresIn?: number;
  /** Argument name → glob: the grant covers only calls whose arguments match them all. */
  args?: Record<string, string>;
  /** always_allow only: the calls the grant may let through (1 to 1,000); without it, any number. */
  uses?: number;
}

export class DecideToolCallCommand extends Command<ToolCallView> {
  constructor(
    readonly decider: Decider,
    readonly toolCallId: string,
    readonly input: DecisionInput,
    readonly grant: GrantOptions = {},
    /**
     * A passkey assertion (AuthenticationResponseJSON) for a call whose rule says `stepUp: passkey`, as the
     * browser made it; the handler verifies it. Any `input.stepUp` is ignored: evidence comes from verification only.
     */
    readonly passkey?: WebAuthnJson,
    /**
     * The arguments the decider was shown where they could not be shown again (an email, a push notification): an
     * approval is refused (`arguments_changed`) unless they are still what it would approve, checked under the
     * call's lock, so an edit committed meanwhile by another approver is never approved unseen.
     */
    readonly shownArguments?: Record<string, unknown>,
  ) {
    super();
  }

  /**
   * Throws ValidationError unless the fields fit the decision: edited `arguments` with approve only; `scope`,
   * `expiresIn` and `args` with always_allow only (the first misplaced field is named); a lifetime of 1 s to
   * 90 days; argument globs a grant can hold. The handler runs it for every way in (REST, gRPC, Slack, the
   * terminal); the REST and gRPC request modules run it earlier, after the 404 and 403 (adapters/api).
   */
  static mustFit(input: DecisionInput, grant: GrantOptions): void {
    const faults = fieldFaults(input, grant);
    if (faults.length > 0) throw new ValidationError(faults);
  }
}

function fieldFaults(input: DecisionInput, grant: GrantOptions): ValidationFault[] {
  if (input.arguments !== undefined && input.decision !== 'approve')
    return [{ path: 'arguments', message: 'is allowed with decision "approve" only' }];
  // A standing deny (always_reject) takes a scope, a lifetime and argument globs as a grant does; `uses` is an allow's.
  const standing = input.decision === 'always_allow' || input.decision === 'always_reject';
  const given = { scope: input.scope, expiresIn: grant.expiresIn, args: grant.args };
  for (const k of ['scope', 'expiresIn', 'args'] as const) {
    if (given[k] !== undefined && !standing)
      return [{ path: k, message: 'is allowed with decision "always_allow" or "always_reject" only' }];
  }
  if (grant.uses !== undefined && input.decision !== 'always_allow')
    return [{ path: 'uses', message: 'is allowed with decision "always_allow" only' }];
  const uses = grant.uses === undefined ? undefined : usesFault(grant.uses);
  if (uses) return [{ path: 'uses', message: uses }];
  if (input.response !== undefined && input.decision !== 'respond')
    return [{ path: 'response', message: 'is allowed with decision "respond" only' }];
  if (input.decision === 'respond' && (typeof input.response !== 'string' || input.response.trim() === ''))
    return [{ path: 'response', message: 'is required with decision "respond": what the agent is told instead' }];
  if (typeof input.response === 'string' && input.response.length > MAX_RESPONSE_LENGTH)
    return [{ path: 'response', message: `must be at most ${MAX_RESPONSE_LENGTH} characters` }];
  const lifetime = grant.expiresIn === undefined ? undefined : expiresInFault(grant.expiresIn);
  if (lifetime) return [{ path: 'expiresIn', message: lifetime }];
  return grant.args === undefined ? [] : grantArgsFaults(grant.args);
}
