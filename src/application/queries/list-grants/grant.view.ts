import { Grant, GrantStatus, grantPatternText } from '../../../domain/grant/grant.aggregate';
import type { GrantScope } from '../../../domain/policy/approval-policy';

/** A standing grant as GET /v1/grants shows it. */
export interface GrantView {
  id: string;
  toolName: string;
  scope: GrantScope;
  conversationId: string | null;
  agentId: string | null;
  /** Argument name → glob; null: any arguments. */
  args: Record<string, string> | null;
  /** What the grant covers, written as a policy pattern: `shell(cmd=ls *)`, or the tool name alone. */
  pattern: string;
  status: GrantStatus;
  createdBy: { id: string; name?: string; via: string };
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  revokedBy: { id: string; name?: string; via: string } | null;
  revokeReason: string | null;
  sourceToolCallId: string;
  /** `allow`: a grant (turns confirm into automatic); `deny`: a standing deny (matching calls are denied). */
  effect: 'allow' | 'deny';
  /** A limited grant: the calls it may let through, and how many are left (null: any number). */
  uses: number | null;
  usesLeft: number | null;
}

export function grantView(g: Grant, now: Date): GrantView {
  const s = g.snapshot();
  return {
    id: s.id,
    toolName: s.toolName,
    scope: s.scope,
    conversationId: s.conversationId ?? null,
    agentId: s.agentId ?? null,
    args: s.args ?? null,
    pattern: grantPatternText(s.toolName, s.args),
    status: g.statusAt(now),
    createdBy: s.createdBy,
    createdAt: s.createdAt.toISOString(),
    expiresAt: s.expiresAt?.toISOString() ?? null,
    revokedAt: s.revocation?.at.toISOString() ?? null,
    revokedBy: s.revocation?.by ?? null,
    revokeReason: s.revocation?.reason ?? null,
    sourceToolCallId: s.sourceToolCallId,
    effect: g.effect,
    uses: s.uses ?? null,
    usesLeft: s.usesLeft ?? null,
  };
}
