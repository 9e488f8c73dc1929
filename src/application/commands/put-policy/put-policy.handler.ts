import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { PolicyDocument } from '../../../domain/policy/policy-document';
import { CLOCK, Clock, POLICIES, PolicyRepository, UNIT_OF_WORK, UnitOfWork } from '../../ports';
import { policyView } from '../../views/views';
import { PutPolicyCommand } from './put-policy.command';

@CommandHandler(PutPolicyCommand)
export class PutPolicyHandler implements ICommandHandler<PutPolicyCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(POLICIES) private readonly policies: PolicyRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ tenantId, by, document, opts }: PutPolicyCommand) {
    const parsed = PolicyDocument.parse(document); // invalid → 400 naming the path; the old version stays
    return this.uow.run(async () => {
      // Locked: concurrent PUTs of a tenant take the next version in turn instead of colliding on it.
      const policy = await this.policies.current(tenantId, { lock: true });
      const changed = policy.replace(parsed, by, this.clock.now(), opts);
      if (changed) await this.policies.save(policy);
      return { policy: policyView(policy), changed };
    });
  }
}
