import { ValidationError, ValidationFault } from '../shared/domain-error';
import { ApprovalPolicy, PolicyVerdict } from './approval-policy';
import { namesPerson, personReferencesOf, readPersonReference } from './assignee';
import { PolicyDocument } from './policy-document';

// People named in a policy (`person:<id or email>`) beside roles: how a document reads them, what it refuses,
// and who may decide the calls it holds.

function faultsOf(raw: unknown): ValidationFault[] {
  try {
    PolicyDocument.parse(raw);
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as ValidationError).faults;
  }
  throw new Error('the document was accepted');
}

const rule = (extra: Record<string, unknown>) => ({ rules: [{ match: 'wire_money', level: 'confirm', ...extra }] });

function judge(raw: unknown, user?: { id: string; roles: string[]; verified?: boolean }): PolicyVerdict {
  return ApprovalPolicy.evaluate(
    { toolName: 'wire_money', arguments: {} },
    {
      policy: PolicyDocument.parse(raw),
      policyVersion: 3,
      grants: [],
      conversation: { id: 'conv_1', agentId: 'agent_1', ...(user && { user }) },
      now: new Date('2026-03-01T12:00:00.000Z'),
    },
  );
}

describe('reading people in a policy document', () => {
  it('accepts people in approvers, in escalation steps and in a quorum, stored lowercased', () => {
    const doc = PolicyDocument.parse({
      defaults: { approvers: ['admin', 'person:Dee'] },
      rules: [
        {
          match: 'wire_money',
          level: 'confirm',
          approvers: ['person:Ann@Example.com', 'requester'],
          quorum: { count: 2, of: ['person:CFO', 'finance', 'person:cfo'] },
          escalate: [{ after: 60, approvers: ['person:CEO@example.com'], notify: ['push', 'email'] }],
        },
      ],
    });
    expect(doc.defaults.approvers).toEqual(['admin', 'person:dee']);
    expect(doc.rules[0]).toEqual({
      match: 'wire_money',
      level: 'confirm',
      approvers: ['person:ann@example.com', 'requester'],
      quorum: { count: 2, of: ['person:cfo', 'finance'] },
      escalate: [{ after: 60, approvers: ['person:ceo@example.com'], notify: ['push', 'email'] }],
    });
  });

  it('reads a stored document back as it was written', () => {
    const stored = PolicyDocument.parse(rule({ approvers: ['person:Ann@Example.com'] })).toJSON();
    expect(PolicyDocument.restore(stored).toJSON()).toEqual(stored);
  });

  it('accepts a reference of exactly 320 characters, and an email or id in any script', () => {
    const edge = `person:${'y'.repeat(320)}`;
    const doc = PolicyDocument.parse(rule({ approvers: [edge, 'person:Zoë@exämple.de', 'person:用户'] }));
    expect(doc.rules[0].approvers).toEqual([edge, 'person:zoë@exämple.de', 'person:用户']);
  });

  it.each<[string, unknown, ValidationFault]>([
    [
      'a person naming no one',
      rule({ approvers: ['person:'] }),
      { path: 'rules[0].approvers[0]', message: '"person:": names no one: write person:<id or email>' },
    ],
    [
      'a reference over 320 characters',
      rule({ approvers: ['admin', `person:${'x'.repeat(321)}`] }),
      {
        path: 'rules[0].approvers[1]',
        message: expect.stringMatching(/^"person:x+…": names an id or email longer than 320 characters$/),
      },
    ],
    [
      'whitespace inside',
      rule({ approvers: ['person:ann smith'] }),
      {
        path: 'rules[0].approvers[0]',
        message: '"person:ann smith": must name an id or email without whitespace or control characters',
      },
    ],
    [
      'whitespace around',
      { defaults: { approvers: ['person: ann'] } },
      { path: 'defaults.approvers[0]', message: expect.stringContaining('without whitespace or control characters') },
    ],
    [
      'a control character',
      rule({ approvers: ['person:ann\u0007'] }),
      { path: 'rules[0].approvers[0]', message: expect.stringContaining('without whitespace or control characters') },
    ],
    [
      'an invisible format character',
      rule({ approvers: ['person:ann\u200b'] }),
      { path: 'rules[0].approvers[0]', message: expect.stringContaining('without whitespace or control characters') },
    ],
    [
      'the prefix in capitals, which is not a role either',
      rule({ approvers: ['Person:ann'] }),
      {
        path: 'rules[0].approvers[0]',
        message:
          '"Person:ann": is not a role that may decide; use approver, admin, requester, or person:<id or email> for one person',
      },
    ],
    [
      'a person naming no one in an escalation step',
      rule({ escalate: [{ after: 30, approvers: ['person:'], notify: ['email'] }] }),
      { path: 'rules[0].escalate[0].approvers[0]', message: expect.stringContaining('names no one') },
    ],
    [
      'a person with whitespace in a quorum',
      rule({ quorum: { count: 1, of: ['finance', 'person:c f o'] } }),
      { path: 'rules[0].quorum.of[1]', message: expect.stringContaining('without whitespace') },
    ],
    [
      'a quorum of people alone, fewer than its count',
      rule({ quorum: { count: 3, of: ['person:cfo', 'person:CEO', 'person:ceo'] } }),
      { path: 'rules[0].quorum.of', message: 'names 2 of 3 people needed and no role: it could never be reached' },
    ],
    [
      'a channel to notify that does not exist',
      rule({ escalate: [{ after: 30, approvers: ['admin'], notify: ['sms'] }] }),
      {
        path: 'rules[0].escalate[0].notify',
        message: 'must be a non-empty list of slack, webhook, inbox, push, email',
      },
    ],
  ])('refuses %s, at its path', (_, raw, fault) => {
    expect(faultsOf(raw)).toEqual([fault]);
  });

  it('tells every bad person of a document at once', () => {
    const faults = faultsOf({
      defaults: { approvers: ['person:'] },
      rules: [{ match: 'x', level: 'confirm', approvers: ['admin', 'person:a b'] }],
    });
    expect(faults.map((f) => f.path)).toEqual(['defaults.approvers[0]', 'rules[0].approvers[1]']);
  });

  it('keeps a quorum of people and roles that could be reached', () => {
    const doc = PolicyDocument.parse(rule({ quorum: { count: 3, of: ['person:cfo', 'finance'] } }));
    expect(doc.rules[0].quorum).toEqual({ count: 3, of: ['person:cfo', 'finance'] });
  });
});

describe('who may decide a held call, by the verdict', () => {
  it('holds the call for the people the rule names', () => {
    expect(judge(rule({ approvers: ['person:ann@example.com'] }))).toMatchObject({
      level: 'confirm',
      approvers: ['person:ann@example.com'],
    });
  });

  it('adds the people a quorum counts to the approvers, once, after those the rule lists', () => {
    expect(judge(rule({ quorum: { count: 1, of: ['person:cfo'] } }))).toMatchObject({
      approvers: ['approver', 'admin', 'person:cfo'],
      quorum: { count: 1, of: ['person:cfo'] },
    });
    expect(
      judge(rule({ approvers: ['person:cfo', 'admin'], quorum: { count: 2, of: ['person:cfo', 'admin', 'finance'] } }))
        .approvers,
    ).toEqual(['person:cfo', 'admin']);
  });

  it('adds no one to a call that is not held', () => {
    const v = judge({ rules: [{ match: 'wire_money', level: 'notify', quorum: { count: 1, of: ['person:cfo'] } }] });
    expect(v.level).toBe('notify');
    expect(v.approvers).toEqual(['approver', 'admin']);
  });

  it('keeps a passkey call that only an unverified requester and a quorum person may decide for the person', () => {
    const v = judge(rule({ approvers: ['requester'], stepUp: 'passkey', quorum: { count: 1, of: ['person:cfo'] } }), {
      id: 'u1',
      roles: [],
    });
    expect(v).toMatchObject({ level: 'confirm', approvers: ['person:cfo'] });
  });
});

describe('the assignee helper', () => {
  it('gives the references SQL compares, lowercased, without a repeat', () => {
    expect(personReferencesOf({ id: 'U-1', email: 'Ann@Example.com' })).toEqual([
      'person:u-1',
      'person:ann@example.com',
    ]);
    expect(personReferencesOf({ id: 'ann@example.com', email: 'ANN@example.com' })).toEqual(['person:ann@example.com']);
    expect(personReferencesOf({ id: 'u-1' })).toEqual(['person:u-1']);
  });

  it('names a person by id or email, and never through a role entry', () => {
    expect(namesPerson(['admin', 'person:u-1'], { id: 'U-1' })).toBe(true);
    expect(namesPerson(['person:ann@example.com'], { id: 'x', email: 'ANN@example.com' })).toBe(true);
    expect(namesPerson(['admin', 'requester'], { id: 'admin' })).toBe(false);
    expect(namesPerson(['person:'], { id: '' })).toBe(false);
  });

  it('counts the bound in characters, not UTF-16 units', () => {
    expect(readPersonReference(`person:${'😀'.repeat(320)}`).ok).toBe(true);
    expect(readPersonReference(`person:${'😀'.repeat(321)}`).ok).toBe(false);
  });
});
