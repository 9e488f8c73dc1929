import type { HookEvent } from './hook-input';

/** What the hook tells Claude Code about one tool call. */
export interface Verdict {
  decision: 'allow' | 'deny' | 'ask';
  /** Shown to Claude on a deny, to the user on an ask. */
  reason: string;
  /** The input to run instead of Claude's: an approver's edit, or the input with its paths made plain. */
  updatedInput?: Record<string, unknown>;
}

/**
 * The verdict as the JSON Claude Code reads on stdout (exit 0), or undefined for nothing at all. A PermissionRequest
 * hook has no `ask`: saying nothing lets Claude Code show its own dialog, which is what `ask` means there.
 */
export function hookOutput(event: HookEvent, v: Verdict): string | undefined {
  if (event === 'PermissionRequest') {
    if (v.decision === 'ask') return undefined;
    const decision =
      v.decision === 'allow'
        ? { behavior: 'allow', ...(v.updatedInput ? { updatedInput: v.updatedInput } : {}) }
        : { behavior: 'deny', message: v.reason };
    return JSON.stringify({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } });
  }
  return JSON.stringify({
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: v.decision,
      permissionDecisionReason: v.reason,
      ...(v.decision === 'allow' && v.updatedInput ? { updatedInput: v.updatedInput } : {}),
    },
  });
}
