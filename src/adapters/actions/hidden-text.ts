/**
 * Characters that would show a text other than it is (control, format — a right-to-left override, a zero-width
 * space —, line and paragraph separators). Arguments whose compact JSON holds any are not shown as approvable: a
 * channel offers no Approve beside them, and the card shows them as they are.
 */
export const HIDDEN_TEXT = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
