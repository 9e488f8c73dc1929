import { Principal } from '../../../domain/shared/actor';
import { ProposedCall } from '../../../domain/conversation/conversation.aggregate';
import { Command } from '@nestjs/cqrs';
import type { ConversationView, ToolCallView } from '../../views/views';

/** `replay`: the same proposal again (by its ids), answered as first recorded. */
export interface ProposalResult {
  replay: boolean;
  conversation: ConversationView;
  toolCalls: ToolCallView[];
  /** Asked with `claim`: the claim of each call the policy approved on the spot (now `executed`). */
  claims?: ProposalClaim[];
}

/** A claim made with the proposal: what `POST /v1/tool-calls/{id}/execution` answers, less the call itself. */
export interface ProposalClaim {
  toolCallId: string;
  arguments: Record<string, unknown>;
  receipt: string;
}

/** A result sent with a proposal: what `POST /v1/tool-calls/{id}/result` records. */
export interface CarriedResult {
  toolCallId: string;
  outcome: 'succeeded' | 'failed';
  output?: unknown;
  error?: string;
}

export class ProposeToolCallsCommand extends Command<ProposalResult> {
  constructor(
    readonly principal: Principal,
    readonly conversationId: string,
    readonly calls: ProposedCall[],
    /** Claim at once each call the policy approves on the spot, in the same transaction. */
    readonly claim = false,
    /** The request's idempotency key for its claims: the same request retried is answered the same claims. */
    readonly claimKey?: string,
    /** Results of earlier calls of this conversation, recorded first, in the same transaction. */
    readonly results: CarriedResult[] = [],
  ) {
    super();
  }
}
