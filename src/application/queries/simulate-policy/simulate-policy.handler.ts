import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { type Conversation, policyUser } from '../../../domain/conversation/conversation.aggregate';
import { PolicyDocument } from '../../../domain/policy/policy-document';
import { SimulationCall, simulatePolicy } from '../../../domain/policy/policy-simulation';
import { ValidationError, ValidationFault } from '../../../domain/shared/domain-error';
import {
  CLOCK,
  Clock,
  CONVERSATIONS,
  ConversationRepository,
  GRANTS,
  GrantRepository,
  PENDING,
  POLICIES,
  PolicyRepository,
  TOOLS,
  ToolRepository,
} from '../../ports';
import { RECORDED_CALLS, RecordedToolCalls } from '../../ports/policy-history.port';
import { HypotheticalCall, SimulatedCallView, SimulatePolicyQuery, SimulationView } from './simulate-policy.query';

const DAY_MS = 86_400_000;

export type { SimulatedCallView, SimulationView } from './simulate-policy.query';

/**
 * Judges calls by a candidate document beside what they got. Plain reads only: no unit of work, no events,
 * no writes; the registry, the standing grants and conversations' users are read as they are now.
 */
@QueryHandler(SimulatePolicyQuery)
export class SimulatePolicyHandler implements IQueryHandler<SimulatePolicyQuery> {
  constructor(
    @Inject(POLICIES) private readonly policies: PolicyRepository,
    @Inject(TOOLS) private readonly tools: ToolRepository,
    @Inject(GRANTS) private readonly grants: GrantRepository,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(RECORDED_CALLS) private readonly recorded: RecordedToolCalls,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ tenantId, document, over }: SimulatePolicyQuery): Promise<SimulationView> {
    const candidate = PolicyDocument.parse(document); // invalid → the same 400 as PUT
    const current = await this.policies.current(tenantId);
    let calls: Array<
      SimulationCall & {
        view: Pick<SimulatedCallView, 'toolCallId' | 'proposedAt' | 'index' | 'conversationId' | 'toolName'>;
      }
    >;
    let truncated = false;
    let since: Date | undefined;
    if ('calls' in over) {
      const conversations = await this.conversationsOf(tenantId, over.calls);
      calls = over.calls.map((c, index) => {
        const conv = c.conversationId === undefined ? undefined : conversations.get(c.conversationId);
        return {
          call: {
            toolName: c.toolName,
            arguments: c.arguments,
            annotations: c.annotations,
            confidence: c.confidence,
            estimatedCost: c.estimatedCost,
          },
          conversation: conv
            ? { id: conv.id, agentId: conv.agentId, user: policyUser(conv.user) }
            : { id: '', agentId: '' },
          view: { index, conversationId: c.conversationId ?? null, toolName: c.toolName },
        };
      });
    } else {
      since = over.since ?? new Date(this.clock.now().getTime() - over.days * DAY_MS);
      const rows = await this.recorded.proposedSince(tenantId, since, over.limit + 1);
      truncated = rows.length > over.limit;
      calls = rows.slice(0, over.limit).map((r) => ({
        call: {
          toolName: r.toolName,
          arguments: r.arguments,
          annotations: r.annotations,
          confidence: r.confidence,
          estimatedCost: r.estimatedCost,
        },
        conversation: { id: r.conversationId, agentId: r.agentId, user: r.user ?? undefined },
        recorded: r.policy,
        view: {
          toolCallId: r.id,
          proposedAt: r.createdAt.toISOString(),
          conversationId: r.conversationId,
          toolName: r.toolName,
        },
      }));
    }
    const names = [...new Set(calls.map((c) => c.call.toolName))];
    const tools = (await this.tools.findMany(tenantId, names)).map((t) => t.snapshot());
    const grants = (await this.grants.forTools(tenantId, names, this.clock.now())).map((g) => g.facts());
    const { results, summary } = simulatePolicy(calls, {
      current: { document: current.document, version: current.policyVersion },
      candidate,
      tools: new Map(tools.map((t) => [t.name, { flags: t, registeredBy: t.registeredBy.kind }])),
      grants,
      now: this.clock.now(),
    });
    return {
      policyVersion: current.policyVersion,
      over: 'calls' in over ? 'calls' : 'recorded',
      since: since?.toISOString() ?? null,
      truncated,
      results: results.map((r, i) => ({ ...calls[i].view, ...r })),
      summary,
    };
  }

  /** The conversations the given calls name; one that does not exist is a fault of the request. */
  private async conversationsOf(tenantId: string, calls: HypotheticalCall[]): Promise<Map<string, Conversation>> {
    const found = new Map<string, Conversation>();
    const faults: ValidationFault[] = [];
    for (const [i, c] of calls.entries()) {
      if (c.conversationId === undefined || found.has(c.conversationId)) continue;
      const conv = await this.conversations.findById(tenantId, c.conversationId, { calls: { statuses: PENDING } });
      if (conv) found.set(c.conversationId, conv);
      else faults.push({ path: `calls[${i}].conversationId`, message: `no conversation ${c.conversationId}` });
    }
    if (faults.length) throw new ValidationError(faults);
    return found;
  }
}
