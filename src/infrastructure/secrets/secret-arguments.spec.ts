import { randomBytes } from 'node:crypto';
import { SecretArguments } from '../../application/redaction/secret-arguments';
import { ToolCall } from '../../domain/conversation/tool-call.entity';
import type { TollgateConfig } from '../config/config';
import { DataKeyVault } from './data-key';

/* The application's secret arguments with the real data-key vault: a call proposed, edited, claimed. */

const vault = new DataKeyVault({
  dataKey: randomBytes(32).toString('base64'),
  dataDir: '/nonexistent',
} as TollgateConfig);
const secrets = new SecretArguments(vault);
const at = new Date('2026-11-28T12:00:00Z');
const real = { headers: { Authorization: 'Bearer s3cret' }, password: 'hunter2', n: 1 };
const names = ['headers.authorization', 'password'];

function proposed(args: Record<string, unknown> = real) {
  const { calls, real: back } = secrets.prepare('t1', 'c1', [{ toolName: 'call_api', arguments: args }], () => names);
  const call = ToolCall.create({
    id: 'tc_1',
    conversationId: 'c1',
    toolName: 'call_api',
    arguments: calls[0].arguments,
    sealedArguments: calls[0].sealedArguments,
    status: 'pending',
    policy: { level: 'confirm', rule: 0, policyVersion: 1, reason: 'r' },
    createdAt: at,
    updatedAt: at,
  });
  return { call, recorded: calls[0], back };
}

const approve = (call: ToolCall, editedArguments?: Record<string, unknown>) =>
  call.moveTo('approved', at, {
    decision: {
      outcome: 'approved',
      by: { id: 'ann', via: 'web' },
      at,
      ...(editedArguments ? { editedArguments } : {}),
    },
  });

describe('SecretArguments', () => {
  it('records a proposal masked and sealed; the policy gets the real call back', () => {
    const { call, recorded, back } = proposed();
    expect(JSON.stringify(recorded.arguments)).not.toMatch(/s3cret|hunter2/);
    expect(recorded.sealedArguments).toMatch(/^v1\./);
    expect(back(recorded).arguments).toEqual(real);
    approve(call);
    expect(secrets.argumentsToRun('t1', call)).toEqual(real);
  });

  it('leaves the arguments of a call with nothing to mask as they are, sealing the names for a later edit', () => {
    const { calls } = secrets.prepare('t1', 'c1', [{ toolName: 'x', arguments: { n: 1 } }], () => names);
    expect(calls[0]).toEqual({ toolName: 'x', arguments: { n: 1 }, sealedArguments: expect.any(String) });
  });

  it('an edit keeps the real values of markers left as shown and masks a typed secret', () => {
    const { call } = proposed();
    const shown = call.arguments as typeof real;
    const edit = secrets.edit('t1', call, { ...shown, password: 'typed-new', n: 2 });
    expect(edit.arguments.headers).toEqual(shown.headers);
    expect(edit.arguments.password).toMatch(/^\[redacted:hmac-[0-9a-f]{12}\]$/);
    expect(edit.arguments.password).not.toBe(shown.password);
    call.reseal(edit.seal!);
    approve(call, edit.arguments);
    expect(secrets.argumentsToRun('t1', call)).toEqual({ ...real, password: 'typed-new', n: 2 });
  });

  it('a seal does not open for another tenant', () => {
    const { call } = proposed();
    approve(call);
    expect(() => secrets.argumentsToRun('t2', call)).toThrow(
      expect.objectContaining({ code: 'sealed_arguments_unreadable' }),
    );
  });

  it('without a vault, a call naming secrets is refused (fail closed)', () => {
    expect(() => new SecretArguments().prepare('t1', 'c1', [{ toolName: 'x', arguments: real }], () => names)).toThrow(
      expect.objectContaining({ code: 'data_key_missing' }),
    );
  });
});
