import { Inject, Optional } from '@nestjs/common';
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
  RECEIPT_LIFETIME_SECONDS,
  RECEIPTS,
  ReceiptIdentity,
  ReceiptSigner,
  UNIT_OF_WORK,
  UnitOfWork,
} from '../../ports';
import { conversationView, toolCallView } from '../../views/views';
import { CallQueues } from '../call-queues';
import { executionClaim } from '../claim-execution/execution-receipt';
import { ProposalResult, ProposeToolCallsCommand } from './propose-tool-calls.command';
import { CALL_USAGE, CallUsageReader } from '../../ports/call-usage.port';
import { TriggerUsage } from './trigger-usage';
import { SecretArguments } from '../../redaction/secret-arguments';
import { unionRedactions } from '../../../domain/shared/redaction';
import { GRANTS, GrantRepository } from '../../ports';
import { LimitedGrants } from './limited-grants';

@CommandHandler(ProposeToolCallsCommand)
export class ProposeToolCallsHandler implements ICommandHandler<ProposeToolCallsCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(POLICY_INPUTS) private readonly inputs: PolicyInputsReader,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(IDS) private readonly ids: IdGenerator,
    @Inject(RECEIPTS) private readonly receipts: ReceiptSigner,
    @Optional() private readonly queues: CallQueues = new CallQueues(),
    // Optional so the unit tests' wiring stays short; without it a call naming secrets is refused (fail closed).
    @Optional() private readonly secrets: SecretArguments = new SecretArguments(),
    // Optional for the same reason; without it every velocity or budget trigger is taken as crossed (a hold).
    @Optional() @Inject(CALL_USAGE) private readonly usage?: CallUsageReader,
    // Optional likewise; without it a limited grant (`uses`) is never applied (its uses could not be counted).
    @Optional() @Inject(GRANTS) private readonly grantStore?: GrantRepository,
  ) {}

  async execute({
    principal: p,
    conversationId,
    calls,
    claim,
    claimKey,
    results = [],
  }: ProposeToolCallsCommand): Promise<ProposalResult> {
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
          { lock: true, calls: { statuses: PENDING, externalIds, ids: results.map((r) => r.toolCallId) } },
          toolNames,
        );
        const conv = visibleConversation(read?.conversation ?? null, p, conversationId);
        mustBeOwningAgent(conv, p);
        const { halt, policy, tools, grants } = read!.inputs;
        const registry = new Map(tools.map((t) => [t.name, t.snapshot()]));
        // Standing denies apart from grants; a limited grant (`uses`) counted down as calls use it (limited-grants.ts).
        const limited = new LimitedGrants(grants, !!this.grantStore);
        const now = this.clock.now();
        // The agent's results of earlier calls first: one commit for the last call's report and the next step.
        // A refused one refuses the request, so nothing of it is written; the same result again (a retry) is a no-op.
        let reported = false;
        for (const { toolCallId, ...result } of results) {
          const before = conv.findCall(toolCallId)?.status;
          conv.complete(toolCallId, result, p, now, true);
          reported ||= before !== 'completed';
        }
        // Secret arguments are judged as proposed, recorded masked, kept sealed (application/redaction).
        const secret = this.secrets.prepare(p.tenant, conv.id, calls, (name) =>
          unionRedactions(registry.get(name)?.redact, policy.document.redactionsFor(name)),
        );
        // Velocity and budget triggers count what came before, under a lock per scope (ports/call-usage.port).
        const usage = await TriggerUsage.read(
          policy.document,
          toolNames,
          this.usage,
          p.tenant,
          { agentId: conv.agentId, conversationId: conv.id },
          now,
        );
        const evaluate = (recorded: ProposedCallFacts) => {
          const real = secret.real(recorded);
          // A call whose arguments were masked is judged on the real ones, but its reasons never quote them.
          const call: ProposedCallFacts = {
            ...real,
            ...(real !== recorded && { quoteArguments: false as const }),
            ...(usage && { usage: usage.current() }),
          };
          const tool = registry.get(call.toolName);
          const verdict = ApprovalPolicy.evaluate(call, {
            policy: policy.document,
            policyVersion: policy.policyVersion,
            tool: tool && { flags: tool, registeredBy: tool.registeredBy.kind },
            grants: limited.grantFacts(),
            denies: limited.denyFacts,
            conversation: { id: conv.id, agentId: conv.agentId, user: policyUser(conv.user) },
            now,
          });
          usage?.add(call, verdict.level);
          limited.counted(verdict);
          return verdict;
        };
        const result = conv.propose(secret.calls, evaluate, () => this.ids.next('tc'), now, halt, p.name, p.via);
        if (this.grantStore) await limited.use(this.grantStore, p, result.calls, now, conv.id);
        const claimed = claim
          ? claimApproved(conv, result.calls, p, now, {
              halted: !!halt,
              key: claimKey,
              receiptId: () => this.ids.next('rcpt'),
            })
          : [];
        if (!result.replay || reported || claimed.some((k) => k.fresh)) await this.conversations.save(conv);
        // The conversation without its call list: GET it for the whole history.
        const answer = {
          replay: result.replay,
          conversation: conversationView(conv, !!halt),
          toolCalls: result.calls.map((c) => toolCallView(c.snapshot())),
        };
        return { answer, claimed };
      },
      { optimistic: true, exclusive: CallQueues.conversation(p.tenant, conversationId) },
    );
    this.queues.proposed(
      p.tenant,
      conversationId,
      answer.toolCalls.map((c) => c.id),
    );
    if (!claim) return answer;
    // Signed after commit: a receipt never exists for a claim that rolled back.
    const claims = await Promise.all(
      claimed.map(async ({ call, receipt: identity }) => {
        const { arguments: args, receipt } = await executionClaim(
          this.receipts,
          p.tenant,
          call,
          identity,
          this.secrets,
        );
        return { toolCallId: call.id, arguments: args, receipt };
      }),
    );
    return { ...answer, claims };
  }
}

/**
 * The claims to answer: each call of the step that stands approved and unclaimed is claimed now (approved on the
 * spot by the policy, or a repeated call approved since: a person decided it while the agent waited), its
 * ToolCallExecuted in this transaction. A call claimed before is never claimed again, with one exception that is
 * no second run: the same request retried (the same agent, the same `claimKey`) is answered the claim it made,
 * the same receipt (its id, issued at the claim, expiring with it), while the result is not in and the receipt
 * has not expired. Nothing is claimed or answered again under a halt.
 */
interface Claimed {
  call: ToolCall;
  /** The receipt's identity when it must be a known one (a keyed claim). */
  receipt?: ReceiptIdentity;
  /** Claimed by this request, not answered again. */
  fresh: boolean;
}

function claimApproved(
  conv: Conversation,
  calls: ToolCall[],
  agent: Principal,
  at: Date,
  o: { halted: boolean; key?: string; receiptId: () => string },
): Claimed[] {
  if (o.halted) return [];
  return calls.flatMap((call): Claimed[] => {
    const run = call.snapshot().execution;
    if (call.status === 'executed' && o.key !== undefined && run?.claim?.key === o.key && run.by.id === agent.id) {
      const expired = at.getTime() >= run.at.getTime() + RECEIPT_LIFETIME_SECONDS * 1000;
      return expired ? [] : [{ call, receipt: { jti: run.claim.receiptId, issuedAt: run.at }, fresh: false }];
    }
    if (call.status !== 'approved') return [];
    const key = o.key === undefined ? undefined : { key: o.key, receiptId: o.receiptId() };
    const outcome = conv.claim(call.id, agent, at, null, key);
    if (outcome.kind !== 'claimed') return [];
    return [{ call: outcome.call, ...(key ? { receipt: { jti: key.receiptId, issuedAt: at } } : {}), fresh: true }];
  });
}
