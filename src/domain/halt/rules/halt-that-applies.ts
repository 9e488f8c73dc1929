import { HALT_SCOPES, HaltScope, HaltTarget } from '../halt.aggregate';

/** Where a proposal or a claim happens: the halts that can stop it are its tenant's, its agent's and its own. */
export interface HaltedPlace {
  agentId: string;
  conversationId: string;
}

/** True when the halt stops work at `place` (both of one tenant). */
export function haltCovers(halt: HaltTarget, place: HaltedPlace): boolean {
  switch (halt.scope) {
    case 'tenant':
      return halt.id === '';
    case 'agent':
      return halt.id === place.agentId;
    case 'conversation':
      return halt.id === place.conversationId;
  }
}

/** Widest first: the order of HALT_SCOPES (tenant, agent, conversation). */
const WIDTH: Record<HaltScope, number> = Object.fromEntries(HALT_SCOPES.map((s, i) => [s, i])) as Record<
  HaltScope,
  number
>;

/**
 * The halt that answers for `place` among a tenant's halts (the store may pass any of them; it need only not leave
 * out a covering one): the widest that covers it, tenant before agent before conversation. Its scope and reason
 * are what the refusal shows, and the widest is the one that still holds once the narrower ones are resumed.
 * Null when none covers it.
 */
export function haltThatApplies<H extends HaltTarget>(candidates: readonly H[], place: HaltedPlace): H | null {
  let found: H | null = null;
  for (const h of candidates)
    if (haltCovers(h, place) && (found === null || WIDTH[h.scope] < WIDTH[found.scope])) found = h;
  return found;
}
