import type { Conversation } from '../../domain/conversation/conversation.aggregate';
import {
  Clock,
  ConversationRepository,
  GrantRepository,
  HaltRepository,
  LoadOptions,
  PolicyInputs,
  PolicyInputsReader,
  PolicyRepository,
  ToolRepository,
} from '../ports';

/** PolicyInputs from the repositories, one read after another: for adapters that cannot read them at once. */
export class RepositoryPolicyInputs implements PolicyInputsReader {
  constructor(
    private readonly policies: PolicyRepository,
    private readonly tools: ToolRepository,
    private readonly grants: GrantRepository,
    private readonly halts: HaltRepository,
    private readonly conversations: ConversationRepository,
    /** Judges which grants apply now (revoked and expired ones never do); the system clock when not given. */
    private readonly clock: Clock = { now: () => new Date() },
  ) {}

  async withConversation(
    tenantId: string,
    conversationId: string,
    opts: LoadOptions,
    toolNames: string[],
  ): Promise<{ conversation: Conversation; inputs: PolicyInputs } | null> {
    const conversation = await this.conversations.findById(tenantId, conversationId, opts);
    return (
      conversation && {
        conversation,
        inputs: await this.forProposal(tenantId, { agentId: conversation.agentId, conversationId, toolNames }),
      }
    );
  }

  async forProposal(
    tenantId: string,
    { agentId, conversationId, toolNames }: { agentId: string; conversationId: string; toolNames: string[] },
  ): Promise<PolicyInputs> {
    const halt = await this.halts.covering(tenantId, agentId, conversationId);
    const policy = await this.policies.current(tenantId);
    const tools = await this.tools.findMany(tenantId, toolNames);
    const grants = await this.grants.forTools(tenantId, toolNames, this.clock.now());
    return { halt, policy, tools, grants };
  }
}
