import type { PolicyDocument } from '../policy/policy-document';
import { quorumFault } from './pending-change.aggregate';

/** A tenant's four-eyes setting: how many distinct admins a change of the control plane needs (proposer included). */
export interface Governance {
  quorum: number;
}

/**
 * The governance a policy document sets (its top-level `governance`), or null when it sets none: then every
 * control-plane change takes effect at once, as before. The document in force decides, so turning governance
 * off is itself a governed change. A value the document could not hold is read as no governance only if absent:
 * a malformed one fails closed at the highest quorum.
 */
export function governanceOf(document: PolicyDocument): Governance | null {
  const g = (document.toJSON() as { governance?: unknown }).governance;
  if (g === undefined || g === null) return null;
  const quorum = (g as { quorum?: unknown }).quorum;
  if (quorumFault(quorum)) return { quorum: 10 };
  return { quorum: quorum as number };
}
