import { ValidationError } from '../shared/domain-error';
import { ApprovalPolicy, PolicyVerdict } from './approval-policy';
import { PolicyDocument } from './policy-document';

// A rule's `notify`: which channels reach out to people about the calls it holds or tells of.

function verdict(doc: unknown): PolicyVerdict {
  return ApprovalPolicy.evaluate(
    { toolName: 'deploy', arguments: {} },
    {
      policy: PolicyDocument.parse(doc),
      policyVersion: 1,
      grants: [],
      conversation: { id: 'c', agentId: 'a', user: { id: 'u', roles: [] } },
      now: new Date('2026-11-28T12:00:00Z'),
    },
  );
}

function faults(doc: unknown): string[] {
  try {
    PolicyDocument.parse(doc);
    return [];
  } catch (e) {
    return (e as ValidationError).faults.map((f) => `${f.path}: ${f.message}`);
  }
}

describe("a rule's notify", () => {
  it('is carried by the verdict of the calls it holds or tells of, each channel once; absent means all', () => {
    expect(
      verdict({ rules: [{ match: 'deploy', level: 'confirm', notify: ['push', 'email', 'push'] }] }).notify,
    ).toEqual(['push', 'email']);
    expect(verdict({ rules: [{ match: 'deploy', level: 'notify', notify: ['email'] }] }).notify).toEqual(['email']);
    expect(verdict({ rules: [{ match: 'deploy', level: 'manual' }] }).notify).toBeUndefined();
  });

  it('keeps its order and shape when the document is written back', () => {
    const doc = PolicyDocument.parse({ rules: [{ match: 'deploy', level: 'confirm', notify: ['slack', 'email'] }] });
    expect(doc.toJSON().rules[0]).toEqual({ match: 'deploy', level: 'confirm', notify: ['slack', 'email'] });
  });

  it('is refused empty, with an unknown channel, or on a rule that tells no one (automatic, deny)', () => {
    expect(faults({ rules: [{ match: 'deploy', level: 'confirm', notify: [] }] })).toEqual([
      'rules[0].notify: must be a non-empty list of slack, webhook, inbox, push, email',
    ]);
    expect(faults({ rules: [{ match: 'deploy', level: 'confirm', notify: ['sms'] }] })).toHaveLength(1);
    expect(faults({ rules: [{ match: 'deploy', level: 'automatic', notify: ['push'] }] })).toEqual([
      'rules[0].notify: applies to calls people are told of (confirm, manual, notify), not to automatic',
    ]);
    expect(faults({ rules: [{ match: 'deploy', level: 'deny', notify: ['push'] }] })).toHaveLength(1);
  });
});
