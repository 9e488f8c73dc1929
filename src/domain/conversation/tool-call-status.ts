export const TOOL_CALL_STATUSES = [
  'pending',
  'approved',
  'rejected',
  'expired',
  'cancelled',
  'executed',
  'completed',
] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

/** The one transition table; every status change goes through `canMove`. */
const TRANSITIONS: Record<ToolCallStatus, readonly ToolCallStatus[]> = {
  pending: ['approved', 'rejected', 'expired', 'cancelled'],
  approved: ['executed', 'cancelled'],
  executed: ['completed'],
  rejected: [],
  expired: [],
  cancelled: [],
  completed: [],
};

export function canMove(from: ToolCallStatus, to: ToolCallStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export function isTerminal(status: ToolCallStatus): boolean {
  return TRANSITIONS[status].length === 0;
}
