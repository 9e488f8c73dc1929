import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { PolicyDocument } from '../../../domain/policy/policy-document';
import { PolicyVersionNotFoundError } from '../../../domain/policy/tenant-policy.errors';
import { CLOCK, Clock, POLICIES, PolicyRepository, UNIT_OF_WORK, UnitOfWork } from '../../ports';
import { POLICY_HISTORY, PolicyHistory } from '../../ports/policy-history.port';
import { policyView } from '../../views/views';
import { RollBackPolicyCommand } from './roll-back-policy.command';

@CommandHandler(RollBackPolicyCommand)
export class RollBackPolicyHandler implements ICommandHandler<RollBackPolicyCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(POLICIES) private readonly policies: PolicyRepository,
    @Inject(POLICY_HISTORY) private readonly history: PolicyHistory,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ tenantId, by, version, reason }: RollBackPolicyCommand) {
    return this.uow.run(async () => {
      // Under the policy's lock, as PUT: a rollback and a PUT at once take versions in turn.
      const policy = await this.policies.current(tenantId, { lock: true });
      const target = await this.history.get(tenantId, version);
      if (!target) throw new PolicyVersionNotFoundError(version);
      // Checked as a new document would be (400 naming the path): what comes back into force meets today's rules.
      policy.rollBack(
        { version, document: PolicyDocument.parse(target.document.toJSON()) },
        by,
        this.clock.now(),
        reason,
      );
      await this.policies.save(policy);
      return policyView(policy);
    });
  }
}
