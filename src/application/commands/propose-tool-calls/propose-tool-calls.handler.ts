import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ApprovalPolicy, ProposedCallFacts } from '../../../domain/policy/approval-policy';
import { mustBeOwningAgent, visibleConversation } from '../../access';
import {
  CLOCK, Clock, CONVERSATIONS, ConversationRepository, GRANTS, GrantRepository, HALTS, HaltRepository,
  IDS, IdGenerator, POLICIES, PolicyRepository, TOOLS, ToolRepository, UNIT_OF_WORK, UnitOfWork,
} from '../../ports';
import { conversationView, toolCallView } from '../../views/views';
import { ProposeToolCallsCommand } from './propose-tool-calls.command';

@CommandHandler(ProposeToolCallsCommand)
export class ProposeToolCallsHandler implements ICommandHandler<ProposeToolCallsCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(POLICIES) private readonly policies: PolicyRepository,
    @Inject(TOOLS) private readonly tools: ToolRepository,
    @Inject(GRANTS) private readonly grants: GrantRepository,
    @Inject(HALTS) private readonly halts: HaltRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(IDS) private readonly ids: IdGenerator,
  ) {}

  execute({ principal: p, conversationId, calls }: ProposeToolCallsCommand) {
    return this.uow.run(async () => {
      const conv = visibleConversation(await this.conversations.findById(p.tenant, conversationId, { lock: true }), p, conversationId);
      mustBeOwningAgent(conv, p);
      const names = [...new Set(calls.map((c) => c.toolName))];
      // One transaction is one connection: these reads run one after another.
      const halt = await this.halts.covering(p.tenant, conv.agentId, conv.id);
      const policy = await this.policies.current(p.tenant);
      const tools = await this.tools.findMany(p.tenant, names);
      const grants = await this.grants.forTools(p.tenant, names);
      const registry = new Map(tools.map((t) => [t.name, t.snapshot()]));
      const evaluate = (call: ProposedCallFacts) => {
        const tool = registry.get(call.toolName);
        return ApprovalPolicy.evaluate(call, {
          policy: policy.document,
          policyVersion: policy.policyVersion,
          tool: tool && { flags: tool, registeredBy: tool.registeredBy.kind },
          grants: grants.map((g) => g.facts()),
          conversation: { id: conv.id, agentId: conv.agentId, user: conv.user ?? undefined },
        });
      };
      const result = conv.propose(calls, evaluate, () => this.ids.next('tc'), this.clock.now(), halt, p.name);
      if (!result.replay) await this.conversations.save(conv);
      return { replay: result.replay, conversation: conversationView(conv, !!halt), toolCalls: result.calls.map((c) => toolCallView(c.snapshot())) };
    });
  }
}
