import { jsonEqual } from '../../shared/json';
import { ValidationError } from '../../shared/domain-error';
import { IdempotencyMismatchError } from '../conversation.errors';
import type { ToolCall } from '../tool-call.entity';

/**
 * A step's calls that repeat earlier ones (same external id), by their index in the step. The same id twice in
 * one step is invalid; an earlier call with the same id but another tool or other arguments is a clash.
 */
export function repeatedCalls(
  step: ReadonlyArray<{ externalId?: string; toolName: string; arguments: Record<string, unknown> }>,
  earlier: (externalId: string) => ToolCall | undefined,
): Map<number, ToolCall> {
  const seen = new Set<string>();
  const repeats = new Map<number, ToolCall>();
  step.forEach((p, i) => {
    if (p.externalId === undefined) return;
    if (seen.has(p.externalId))
      throw new ValidationError([{ path: `toolCalls[${i}].id`, message: `duplicate id ${p.externalId} in one step` }]);
    seen.add(p.externalId);
    const before = earlier(p.externalId);
    if (!before) return;
    if (before.toolName !== p.toolName || !jsonEqual(before.arguments, p.arguments)) {
      throw new IdempotencyMismatchError(
        `Tool call id ${p.externalId} was already proposed in this conversation with different content`,
      );
    }
    repeats.set(i, before);
  });
  return repeats;
}
