import { Inject, Optional } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { PolicyDocument } from '../../../domain/policy/policy-document';
import { CLOCK, Clock, POLICIES, PolicyRepository, UNIT_OF_WORK, UnitOfWork } from '../../ports';
import { policyView } from '../../views/views';
import { GovernanceGate } from '../changes/governance-gate';
import { policyChangeSummary } from '../changes/summaries';
import { PutPolicyCommand } from './put-policy.command';

@CommandHandler(PutPolicyCommand)
export class PutPolicyHandler implements ICommandHandler<PutPolicyCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(POLICIES) private readonly policies: PolicyRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    // Bound by the composition root (governance.composition.ts); optional so the unit tests' wiring stays short.
    @Optional() private readonly gate?: GovernanceGate,
  ) {}

  async execute({ tenantId, by, document, opts }: PutPolicyCommand) {
    const parsed = PolicyDocument.parse(document); // invalid → 400 naming the path; the old version stays
    return this.uow.run(async () => {
      // Locked: concurrent PUTs of a tenant take the next version in turn instead of colliding on it.
      const policy = await this.policies.current(tenantId, { lock: true });
      // Four eyes: under `governance` in the policy in force, the document waits for another admin instead.
      const held = opts.approvedChange
        ? null
        : await this.gate?.hold(
            {
              tenantId,
              by,
              kind: 'policy_update',
              summary: policyChangeSummary(policy, parsed),
              payload: { document: parsed.toJSON(), ...(opts.source ? { source: opts.source } : {}) },
              baseVersion: policy.policyVersion,
            },
            policy,
          );
      if (held) return { policy: policyView(policy), changed: false, ...held };
      const changed = policy.replace(parsed, by, this.clock.now(), opts);
      if (changed) await this.policies.save(policy);
      return { policy: policyView(policy), changed };
    });
  }
}
