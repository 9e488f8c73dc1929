import type { PolicyDocument } from '../policy/policy-document';
import { MAX_QUORUM, MIN_QUORUM } from './pending-change.aggregate';

/** A tenant's four-eyes setting: how many distinct admins a change of the control plane needs (proposer included). */
export interface Governance {
  quorum: number;
}

/**
 * The governance a policy document sets (its top-level `governance`), or null when it sets none (or `quorum: 1`):
 * then every control-plane change takes effect at once, as before. The document in force decides, so turning
 * governance off is itself a governed change.
 */
export function governanceOf(document: PolicyDocument): Governance | null {
  const quorum = document.governance?.quorum;
  if (quorum === undefined || quorum < MIN_QUORUM) return null;
  return { quorum: Math.min(quorum, MAX_QUORUM) };
}
