import { Inject, Injectable } from '@nestjs/common';
import type { ApprovalRequest } from '../../application/ports/approval-callback.port';
import { ACTION_TOKENS, ActionChannel, ActionTokens } from '../../application/ports/action-token.port';
import { cardPath } from '../../domain/conversation/conversation.errors';
import { previewShownWhole } from '../../domain/conversation/preview-shown';
import { digestJson } from '../../infrastructure/persistence/event-store';
import { PublicAddress } from './public-address';

/** Where a single-use action is confirmed and used: GET shows the confirmation page, POST decides. */
export const ACTION_PATH = '/act';

/**
 * Why a message offers no Approve: the rule wants a passkey, the arguments do not fit where they are shown, or the
 * call's rule does not allow an approval (`allowedDecisions` without `approve`), or the call's preview is one the
 * channel cannot show whole (`preview_not_shown`: an image, text longer than an email shows, any preview in a push
 * notification; domain/conversation/preview-shown, which the server enforces too).
 */
export type ApproveWithheld = 'passkey' | 'too_long' | 'rule' | 'preview_not_shown';
/** Why a message offers no Reject: the rule asks for one of its reasons (`rejectReasons`: chosen on the card), or allows no rejection. */
export type RejectWithheld = 'reason' | 'rule';

/** What a push notification or an email offers one person for one held call. */
export interface ActionOffer {
  /** The call's card in the web inbox. */
  card: string;
  /** Absent when withheld: then the person opens the card. */
  approve?: { url: string; token: string };
  /** Absent when withheld: then the person opens the card. */
  reject?: { url: string; token: string };
  approveWithheld?: ApproveWithheld;
  rejectWithheld?: RejectWithheld;
}

/**
 * Makes the single-use Approve and Reject of one held call for one person on one channel, each bound to the
 * arguments the person is shown (a later edit voids them) and living as long as the call waits. Approve is
 * withheld where the channel cannot carry the approval: a passkey step-up (only the card's browser signs it), or
 * arguments the message cannot show whole (`shownWhole` false): no one approves what they could not read.
 */
@Injectable()
export class ActionLinks {
  constructor(
    @Inject(ACTION_TOKENS) private readonly tokens: ActionTokens,
    private readonly address: PublicAddress,
  ) {}

  cardUrl(toolCallId: string): string {
    return `${this.address.url()}${cardPath(toolCallId)}`;
  }

  /** The web inbox. */
  inboxUrl(): string {
    return `${this.address.url()}/`;
  }

  actionUrl(token: string): string {
    return `${this.address.url()}${ACTION_PATH}/${token}`;
  }

  async offer(
    r: ApprovalRequest,
    personId: string,
    via: ActionChannel,
    opts: { shownWhole: boolean },
  ): Promise<ActionOffer> {
    const base = {
      tenant: r.tenantId,
      person: personId,
      toolCallId: r.id,
      argumentsDigest: digestJson(r.arguments),
      via,
      expiresAt: new Date(r.approval?.expiresAt ?? Date.now()),
    };
    // The call's rule (issue 28 part 4): a link makes only what it allows, and a rejection a link could make has
    // no reason from a list, so one that needs a listed reason is made on the card.
    const allowed = r.approval?.allowedDecisions;
    const withheld: ApproveWithheld | undefined =
      allowed && !allowed.includes('approve')
        ? 'rule'
        : r.approval?.stepUp === 'passkey'
          ? 'passkey'
          : !opts.shownWhole
            ? 'too_long'
            : previewShownWhole(r.preview, via)
              ? undefined
              : 'preview_not_shown';
    const rejectWithheld: RejectWithheld | undefined =
      allowed && !allowed.includes('reject') ? 'rule' : r.approval?.rejectReasons?.length ? 'reason' : undefined;
    const [approve, reject] = await Promise.all([
      withheld ? undefined : this.tokens.issue({ ...base, decision: 'approve' }),
      rejectWithheld ? undefined : this.tokens.issue({ ...base, decision: 'reject' }),
    ]);
    return {
      card: this.cardUrl(r.id),
      ...(approve ? { approve: { url: this.actionUrl(approve), token: approve } } : {}),
      ...(reject ? { reject: { url: this.actionUrl(reject), token: reject } } : {}),
      ...(withheld ? { approveWithheld: withheld } : {}),
      ...(rejectWithheld ? { rejectWithheld } : {}),
    };
  }
}
