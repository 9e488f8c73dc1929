import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Conversation, policyUser } from '../../../domain/conversation/conversation.aggregate';
import type { ToolCall } from '../../../domain/conversation/tool-call.entity';
import type { Principal } from '../../../domain/shared/actor';
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
  RECEIPTS,
  ReceiptSigner,
  UNIT_OF_WORK,
  UnitOfWork,
} from '../../ports';
import { conversationView, toolCallView } from '../../views/views';
import { executionClaim } from '../claim-execution/execution-receipt';
import { ProposalResult, ProposeToolCallsCommand } from './propose-tool-calls.command';

@CommandHandler(ProposeToolCallsCommand)
export class ProposeToolCallsHandler implements ICommandHandler<ProposeToolCallsCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(POLICY_INPUTS) private readonly inputs: PolicyInputsReader,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(IDS) private readonly ids: IdGenerator,
    @Inject(RECEIPTS) private readonly receipts: ReceiptSigner,
  ) {}

  async execute({ principal: p, conversationId, calls, claim }: ProposeToolCallsCommand): Promise<ProposalResult> {
    const { answer, claimed } = await this.uow.run(
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
        const now = this.clock.now();
        const evaluate = (call: ProposedCallFacts) => {
          const tool = registry.get(call.toolName);
          return ApprovalPolicy.evaluate(call, {
            policy: policy.document,
            policyVersion: policy.policyVersion,
            tool: tool && { flags: tool, registeredBy: tool.registeredBy.kind },
            grants: grantFacts,
            conversation: { id: conv.id, agentId: conv.agentId, user: policyUser(conv.user) },
            now,
          });
        };
        const result = conv.propose(calls, evaluate, () => this.ids.next('tc'), now, halt, p.name, p.via);
        const claimed = claim ? claimApproved(conv, result.calls, p, now, !!halt) : [];
        if (!result.replay || claimed.length > 0) await this.conversations.save(conv);
        // The conversation without its call list: GET it for the whole history.
        const answer = {
          replay: result.replay,
          conversation: conversationView(conv, !!halt),
          toolCalls: result.calls.map((c) => toolCallView(c.snapshot())),
        };
        return { answer, claimed };
      },
      { optimistic: true, exclusive: `conversation\u0000${p.tenant}\u0000${conversationId}` },
    );
    if (!claim) return answer;
    // Signed after commit: a receipt never exists for a claim that rolled back.
    const claims = await Promise.all(
      claimed.map(async (call) => {
        const { arguments: args, receipt } = await executionClaim(this.receipts, p.tenant, call);
        return { toolCallId: call.id, arguments: args, receipt };
      }),
    );
    return { ...answer, claims };
  }
}

/**
 * Claims each call of the step that stands approved and unclaimed: approved on the spot by the policy, or a
 * repeated call approved since (a person decided it while the agent waited). Its ToolCallExecuted goes in this
 * transaction. A call claimed before is never claimed again, even when its first proposal claimed it and the
 * answer was lost: exactly once wins over a retry's convenience (the retry finds it `executed`). Nothing is
 * claimed under a halt.
 */
function claimApproved(conv: Conversation, calls: ToolCall[], agent: Principal, at: Date, halted: boolean): ToolCall[] {
  if (halted) return [];
  return calls.flatMap((call) => {
    if (call.status !== 'approved') return [];
    const outcome = conv.claim(call.id, agent, at, null);
    return outcome.kind === 'claimed' ? [outcome.call] : [];
  });
}
