import type { Channel } from '../../shared/actor';
import type { DecisionKind, PolicyRecord } from '../tool-call.entity';
import { isRejection } from './allowed-decisions';

/**
 * Chat approvals: an MCP client answers its approval form itself, so what it relays (`via: mcp`) is no proof a
 * person saw the call. It may approve only a `confirm` call of a tool not flagged destructive, without
 * `selfApproval: false` or a quorum, whose rule did not say `allowChatApproval: false` (the verdict's
 * `chatApproval`). The exclusions are checked again here for calls held before the verdict recorded them.
 * A rejection is always taken. Returns the refusal's reason, or undefined.
 */
export function chatApprovalRefusal(
  decision: DecisionKind,
  policy: Pick<PolicyRecord, 'level' | 'chatApproval' | 'toolFlags' | 'selfApproval' | 'quorum' | 'stepUp'>,
  via: Channel,
): string | undefined {
  if (via !== 'mcp' || isRejection(decision)) return undefined;
  const why = policy.toolFlags?.destructive
    ? 'the tool is destructive'
    : policy.selfApproval === false
      ? 'its rule has selfApproval: false'
      : policy.quorum
        ? 'it needs a quorum'
        : policy.stepUp
          ? 'it needs a passkey'
          : policy.level !== 'confirm'
            ? `it is held ${policy.level}`
            : policy.chatApproval === false
              ? 'its rule says allowChatApproval: false'
              : undefined;
  return why && `A chat client's approval may not decide this call (${why})`;
}
