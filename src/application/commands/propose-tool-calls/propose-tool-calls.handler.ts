import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { policyUser } from '../../../domain/conversation/conversation.aggregate';
import { ApprovalPolicy, ProposedCallFacts } from '../../../domain/policy/approval-policy';
import { mustBeOwningAgent, visibleConversation } from '../../access';
import {
  CLOCK,
  Clock,
  CONVERSATIONS,
  ConversationRepository,
  PENDING,
  IDS,
  IdGenerator,
  POLICY_INPUTS,
  PolicyInputsReader,
  UNIT_OF_WORK,
  UnitOfWork,
} from '../../ports';
import { conversationView, toolCallView } from '../../views/views';
import { ProposeToolCallsCommand } from './propose-tool-calls.command';

@CommandHandler(ProposeToolCallsCommand)
export class ProposeToolCallsHandler implements ICommandHandler<ProposeToolCallsCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(POLICY_INPUTS) private readonly inputs: PolicyInputsReader,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(IDS) private readonly ids: IdGenerator,
  ) {}

  execute({ principal: p, conversationId, calls }: ProposeToolCallsCommand) {
    return this.uow.run(
      async () => {
        // Pending calls decide blocking; earlier calls with these external ids decide idempotency. The rest of
        // the history is not needed, so a proposal costs the same in a conversation's 10,000th step as in its first.
        const externalIds = calls.flatMap((c) => (c.externalId === undefined ? [] : [c.externalId]));
        const toolNames = [...new Set(calls.map((c) => c.toolName))];
        // The conversation and the policy's inputs in one read where the adapter can (one round trip fewer).
        const read = await this.inputs.withConversation(
          p.tenant,
          conversationId,
          { lock: true, calls: { statuses: PENDING, externalIds } },
          toolNames,
        );
        const conv = visibleConversation(read?.conversation ?? null, p, conversationId);
        mustBeOwningAgent(conv, p);
        const { halt, policy, tools, grants } = read!.inputs;
        const registry = new Map(tools.map((t) => [t.name, t.snapshot()]));
        const grantFacts = grants.map((g) => g.facts());
        const evaluate = (call: ProposedCallFacts) => {
          const tool = registry.get(call.toolName);
          return ApprovalPolicy.evaluate(call, {
            policy: policy.document,
            policyVersion: policy.policyVersion,
            tool: tool && { flags: tool, registeredBy: tool.registeredBy.kind },
            grants: grantFacts,
            conversation: { id: conv.id, agentId: conv.agentId, user: policyUser(conv.user) },
            now: this.clock.now(),
          });
        };
        const result = conv.propose(calls, evaluate, () => this.ids.next('tc'), this.clock.now(), halt, p.name, p.via);
        if (!result.replay) await this.conversations.save(conv);
        // The conversation without its call list: GET it for the whole history.
        return {
          replay: result.replay,
          conversation: conversationView(conv, !!halt),
          toolCalls: result.calls.map((c) => toolCallView(c.snapshot())),
        };
      },
      { optimistic: true, exclusive: `conversation\u0000${p.tenant}\u0000${conversationId}` },
    );
  }
}
