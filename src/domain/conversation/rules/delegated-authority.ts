import { isAgent, Principal } from '../../shared/actor';
import type { DecisionInput, ToolCall } from '../tool-call.entity';
import { countedFor, countsTowards } from './quorum';
import { InterestedParties, onBehalfRefusal, selfApprovalRefusal } from './separation-of-duties';
import { mayDecide } from './who-may-decide';
import { isRejection } from './allowed-decisions';

/** Whose authority a person decides a call with: their own, or that of a delegator they stand in for. */
export type Authority = { kind: 'own' } | { kind: 'on_behalf'; of: Principal };

/**
 * A person decides with their own rights when those let them make this decision (decide the call at all, and,
 * for an approval towards a quorum with `of`, count towards it). Otherwise with the rights of one of their
 * `delegators` (people whose delegation to them holds now, as their records last showed them): the decision is
 * then made on that delegator's behalf, and never reaches beyond what the delegator may do for this call.
 * Delegation is not transitive: `delegators` are the people who delegated to this person, with their own rights
 * only, never what others delegated to them. Of several delegators, the first (by id) whose approval the rules
 * would take is chosen; else the first who may decide, whose refusal is then recorded. Undefined: no one's
 * rights let them decide (an agent never decides).
 */
export function authorityFor(
  by: Principal,
  call: ToolCall,
  input: DecisionInput,
  parties: InterestedParties,
  delegators: readonly Principal[],
): Authority | undefined {
  if (isAgent(by)) return undefined;
  const approving = !isRejection(input.decision);
  const of = call.policy.quorum?.of;
  const counts = (p: Principal) => !approving || !of || countsTowards(of, p);
  const own = mayDecide(by, call, parties.userId);
  if (own && counts(by)) return { kind: 'own' };
  const able = delegators.filter((d) => d.id !== by.id && !isAgent(d) && mayDecide(d, call, parties.userId));
  const taken = (d: Principal) =>
    counts(d) &&
    selfApprovalRefusal(input.decision, call.policy, d.id, parties) === undefined &&
    countedFor(call, [d.id]) === undefined;
  const chosen = (approving ? able.find(taken) : undefined) ?? able[0];
  if (chosen) return { kind: 'on_behalf', of: chosen };
  return own ? { kind: 'own' } : undefined;
}

/**
 * Why an approval by `p` would be refused whatever passkey came with it (separation of duties, for `p` and for the
 * delegator they would act for), or undefined: asked before a step-up challenge is issued, so no one's device
 * signs for a decision that cannot be made.
 */
export function approvalRefusal(
  p: Principal,
  call: ToolCall,
  parties: InterestedParties,
  delegators: readonly Principal[],
): string | undefined {
  const authority = authorityFor(p, call, { decision: 'approve' }, parties, delegators);
  const delegator = authority?.kind === 'on_behalf' ? authority.of : undefined;
  return (
    selfApprovalRefusal('approve', call.policy, p.id, parties) ??
    (delegator && onBehalfRefusal('approve', call.policy, delegator.id, parties))
  );
}
