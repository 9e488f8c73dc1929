import { governanceOf } from '../../../domain/governance/governance';
import type { PolicyDocument } from '../../../domain/policy/policy-document';
import type { TenantPolicy } from '../../../domain/policy/tenant-policy.aggregate';

/** One line for the inbox: what a held policy document would change, naming a change of governance itself. */
export function policyChangeSummary(current: TenantPolicy, next: PolicyDocument): string {
  const before = governanceOf(current.document);
  const after = governanceOf(next);
  const governance =
    before?.quorum === after?.quorum
      ? ''
      : after
        ? `; governance: quorum ${before?.quorum ?? 'none'} → ${after.quorum}`
        : '; turns governance off';
  const n = next.rules.length;
  return `Replace policy version ${current.policyVersion} with a document of ${n} rule${n === 1 ? '' : 's'}${governance}`;
}
