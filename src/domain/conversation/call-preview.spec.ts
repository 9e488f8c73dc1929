import fc from 'fast-check';
import type { PolicyVerdict } from '../policy/approval-policy';
import type { DomainEvent } from '../shared/domain-event';
import { CallPreview, previewAsText, previewDigestInput, truncatePreview } from './call-preview';
import { Conversation, type Decider } from './conversation.aggregate';

const T0 = new Date('2025-03-01T12:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const PREVIEW: CallPreview = { kind: 'diff', title: 'Scale down', content: '-replicas: 2\n+replicas: 0', digest: 'D1' };
const alice: Decider = { id: 'alice', tenant: 't1', roles: ['approver'], via: 'web' };

function verdict(level: PolicyVerdict['level']): PolicyVerdict {
  return {
    level,
    rule: 0,
    policyVersion: 1,
    reason: `level ${level}`,
    approvers: ['approver'],
    timeoutSeconds: 300,
    grants: 'tenant',
  };
}

function proposed(level: PolicyVerdict['level'], preview?: CallPreview) {
  const conv = Conversation.start({ id: 'c1', tenantId: 't1', agentId: 'bot', user: null, at: at(0) });
  conv.pullEvents();
  let n = 0;
  const { calls } = conv.propose(
    [{ toolName: 'apply', arguments: { f: 1 }, ...(preview ? { preview } : {}) }],
    () => verdict(level),
    () => `tc_${++n}`,
    at(1),
    null,
  );
  return { conv, call: calls[0], events: conv.pullEvents() };
}

const data = (events: DomainEvent[], type: string) =>
  (events.find((e) => e.type === type) as unknown as { data: Record<string, unknown> } | undefined)?.data;

describe('a proposal with a preview', () => {
  it('keeps the preview on the call and in ToolCallProposed', () => {
    const { call, events } = proposed('confirm', PREVIEW);
    expect(call.preview).toEqual(PREVIEW);
    expect(call.snapshot().preview).toEqual(PREVIEW);
    expect(data(events, 'ToolCallProposed')?.preview).toEqual(PREVIEW);
  });

  it("records the preview's digest in the approval a person makes", () => {
    const { conv, call } = proposed('confirm', PREVIEW);
    expect(conv.decide(call.id, { decision: 'approve' }, alice, at(2)).kind).toBe('decided');
    expect(data(conv.pullEvents(), 'ToolCallApproved')?.preview).toBe('D1');
  });

  it('and in the approval the policy makes on the spot', () => {
    expect(data(proposed('automatic', PREVIEW).events, 'ToolCallAutoApproved')?.preview).toBe('D1');
  });

  it('records no preview where the proposal had none', () => {
    const { conv, call, events } = proposed('confirm');
    expect(call.preview).toBeUndefined();
    expect(data(events, 'ToolCallProposed')).not.toHaveProperty('preview');
    conv.decide(call.id, { decision: 'approve' }, alice, at(2));
    expect(data(conv.pullEvents(), 'ToolCallApproved')).not.toHaveProperty('preview');
  });
});

describe("a preview's canonical input", () => {
  it('holds only the members given, never the digest', () => {
    expect(previewDigestInput(PREVIEW)).toEqual({ kind: 'diff', title: 'Scale down', content: PREVIEW.content });
    expect(previewDigestInput({ kind: 'email', content: 'b', email: { to: 'a', subject: undefined } })).toEqual({
      kind: 'email',
      content: 'b',
      email: { to: 'a' },
    });
    expect(previewDigestInput({ kind: 'text', content: 'b', email: {} })).toEqual({ kind: 'text', content: 'b' });
  });
});

describe('cutting a preview for a channel', () => {
  it('never splits a surrogate pair and says when it cut', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), fc.nat(80), (s, max) => {
        const { text, cut } = truncatePreview(s, max);
        expect(text.length).toBeLessThanOrEqual(max);
        expect(cut).toBe(s.length > max);
        expect(s.startsWith(text)).toBe(true);
        expect(/[\ud800-\udbff]$/.test(text)).toBe(false);
      }),
    );
  });

  it('writes an email with its headers first, SQL with its rows, an image by name', () => {
    expect(
      previewAsText({ kind: 'email', content: 'Body', email: { to: 'a@x', subject: 'S' }, digest: 'd' }, 100).text,
    ).toBe('To: a@x\nSubject: S\n\nBody');
    expect(previewAsText({ kind: 'sql', content: 'DELETE', estimatedRows: 4, digest: 'd' }, 100).text).toBe(
      '-- estimated rows: 4\nDELETE',
    );
    expect(previewAsText({ kind: 'image', title: 'Chart', content: 'data:…', digest: 'd' }, 100)).toEqual({
      text: '[image: Chart]',
      cut: false,
    });
  });
});
