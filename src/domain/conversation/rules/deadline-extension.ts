import { hasAnyRole, isAgent, Principal } from '../../shared/actor';
import { ValidationError } from '../../shared/domain-error';
import { MAX_TIMEOUT_SECONDS } from '../../policy/policy-document';
import { NotAllowedToDecideError } from '../conversation.errors';

/** Only an admin may give a pending call more time. Thrown: nothing to record. */
export function checkMayExtendDeadline(by: Principal): void {
  if (isAgent(by) || !hasAnyRole(by, ['admin']))
    throw new NotAllowedToDecideError('Only an admin may extend the deadline of a tool call');
}

/** A new deadline is later than the current one and at most MAX_TIMEOUT_SECONDS from now. Thrown when not. */
export function checkNewDeadline(from: Date, to: Date, at: Date): void {
  if (to.getTime() <= from.getTime() || to.getTime() > at.getTime() + MAX_TIMEOUT_SECONDS * 1000) {
    throw new ValidationError([
      {
        path: 'expiresAt',
        message: `must be later than the current deadline (${from.toISOString()}) and at most ${MAX_TIMEOUT_SECONDS} seconds from now`,
      },
    ]);
  }
}
