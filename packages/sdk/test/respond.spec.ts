import { ToolCallRejectedError } from '../src/errors.js';
import { refusalOrThrow } from '../src/integrations/shared.js';
import type { ToolCall } from '../src/types.js';

const call = (decision: Record<string, unknown>) =>
  ({
    id: 'tc_1',
    toolName: 'restart_service',
    status: 'rejected',
    policy: { level: 'confirm', rule: 0, policyVersion: 1, reason: 'ops' },
    decision: {
      outcome: 'rejected',
      by: { id: 'ann', name: 'Ann', via: 'web' },
      at: '2026-01-01T00:00:00Z',
      ...decision,
    },
  }) as unknown as ToolCall;

describe('a person’s respond reaches the agent as the tool’s answer', () => {
  it('carries the response on the error, and the integrations tell the model the response itself', () => {
    const e = new ToolCallRejectedError('rejected', call({ response: 'Drain the node first, then ask again' }));
    expect(e.response).toBe('Drain the node first, then ask again');
    expect(e.message).toBe('restart_service did not run; Ann answered instead: Drain the node first, then ask again');
    expect(refusalOrThrow(e, undefined)).toBe('Drain the node first, then ask again');
  });

  it('a plain rejection is told as before', () => {
    const e = new ToolCallRejectedError('rejected', call({ reason: 'not today' }));
    expect(e.response).toBeUndefined();
    expect(refusalOrThrow(e, undefined)).toBe('restart_service was rejected by Ann via web: not today');
  });
});
