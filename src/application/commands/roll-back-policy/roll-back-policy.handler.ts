import { Inject, Optional } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { PolicyDocument } from '../../../domain/policy/policy-document';
import { PolicyVersionInForceError, PolicyVersionNotFoundError } from '../../../domain/policy/tenant-policy.errors';
import { CLOCK, Clock, POLICIES, PolicyRepository, UNIT_OF_WORK, UnitOfWork } from '../../ports';
import { POLICY_HISTORY, PolicyHistory } from '../../ports/policy-history.port';
import { policyView } from '../../views/views';
import { RollBackPolicyCommand } from './roll-back-policy.command';
import { GovernanceGate } from '../changes/governance-gate';

@CommandHandler(RollBackPolicyCommand)
export class RollBackPolicyHandler implements ICommandHandler<RollBackPolicyCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(POLICIES) private readonly policies: PolicyRepository,
    @Inject(POLICY_HISTORY) private readonly history: PolicyHistory,
    @Inject(CLOCK) private readonly clock: Clock,
    // Bound by the composition root (governance.composition.ts); optional so the unit tests' wiring stays short.
    @Optional() private readonly gate?: GovernanceGate,
  ) {}

  execute({ tenantId, by, version, reason, approvedChange }: RollBackPolicyCommand) {
    return this.uow.run(async () => {
      // Under the policy's lock, as PUT: a rollback and a PUT at once take versions in turn.
      const policy = await this.policies.current(tenantId, { lock: true });
      const target = await this.history.get(tenantId, version);
      if (!target) throw new PolicyVersionNotFoundError(version);
      // Checked as a new document would be (400 naming the path): what comes back into force meets today's rules.
      const document = PolicyDocument.parse(target.document.toJSON());
      // Four eyes: checked as the rollback itself would check it, then held for another admin under `governance`.
      if (!approvedChange) {
        if (version === policy.policyVersion || (policy.policyVersion > 0 && policy.document.equals(document)))
          throw new PolicyVersionInForceError(version, policy.policyVersion);
        const held = await this.gate?.hold(
          {
            tenantId,
            by,
            kind: 'policy_rollback',
            summary: `Roll the policy back to version ${version} (version ${policy.policyVersion} is in force)${reason ? `: ${reason}` : ''}`,
            payload: { version, ...(reason ? { reason } : {}) },
            baseVersion: policy.policyVersion,
          },
          policy,
        );
        if (held) return { ...policyView(policy), ...held };
      }
      policy.rollBack({ version, document }, by, this.clock.now(), reason);
      await this.policies.save(policy);
      return policyView(policy);
    });
  }
}
