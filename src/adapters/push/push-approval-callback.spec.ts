import { Deciders } from '../../application/persons/deciders';
import type { ApprovalRequest } from '../../application/ports/approval-callback.port';
import type { ActionGrant } from '../../application/ports/action-token.port';
import type { PersonRepository } from '../../application/ports/person.port';
import type { Person } from '../../domain/person/person';
import { loadConfig } from '../../infrastructure/config/config';
import { ActionLinks } from '../actions/action-links';
import type { PublicAddress } from '../actions/public-address';
import { PushApprovalCallback } from './push-approval-callback';
import type { PushMessage } from './push-payload';
import type { PushSender, PushSendOptions } from './push-sender';
import type { ReachPlanner } from '../reach/reach-planner';
import type { PushSubscriptionRecord, PushSubscriptionStore } from './push-subscription.store';
import type { SentKind, SentNotifications } from '../reach/sent-notifications';

const NOW = new Date('2026-03-02T10:00:00.000Z');

const person = (id: string, roles: string[]): Person => ({
  tenantId: 'acme',
  id,
  name: id[0].toUpperCase() + id.slice(1),
  roles,
  firstSeenAt: NOW,
  lastSeenAt: NOW,
});

/** The persons of a tenant, as PersonRepository.reachable finds them (the SQL's rule, in memory). */
class People implements Pick<PersonRepository, 'reachable'> {
  constructor(readonly all: Person[]) {}
  async reachable(_t: string, who: { roles: string[]; named: string[] }): Promise<Person[]> {
    return this.all.filter((p) => p.roles.some((r) => who.roles.includes(r)) || who.named.includes(p.id));
  }
}

const device = (personId: string, id: string): PushSubscriptionRecord => ({
  tenantId: 'acme',
  personId,
  id,
  endpoint: `https://push.example.net/${id}`,
  p256dh: 'key',
  auth: 'secret',
  userAgent: null,
  createdAt: NOW,
  lastSentAt: null,
  failures: 0,
});

const request = (over: Partial<ApprovalRequest> = {}): ApprovalRequest => ({
  tenantId: 'acme',
  id: 'tc_1',
  conversationId: 'conv-1',
  toolName: 'deploy',
  arguments: { service: 'billing' },
  status: 'pending',
  policy: { level: 'confirm', rule: 0, policyVersion: 1, reason: 'rule 0' },
  approval: { approvers: ['approver'], expiresAt: '2026-03-02T10:05:00.000Z' },
  createdAt: NOW.toISOString(),
  updatedAt: NOW.toISOString(),
  conversation: { id: 'conv-1', agentId: 'deploy-bot', user: { id: 'lee', name: 'Lee', roles: [] }, title: null },
  ...over,
});

/** What each person's settings make of a push now: `off`, a digest later, or (unlisted) now. */
type Plan = Record<string, 'off' | 'digest'>;

function setup(people: Person[], devices: PushSubscriptionRecord[], plan: Plan = {}) {
  const planned: Array<{ person: string; channel: string }> = [];
  const planner: Pick<ReachPlanner, 'now'> = {
    async now(_t, channel, asked) {
      for (const p of asked) if (plan[p.id] === 'digest') planned.push({ person: p.id, channel });
      return asked.filter((p) => plan[p.id] === undefined);
    },
  };
  const sent: Array<{ to: string; message: PushMessage; opts: PushSendOptions }> = [];
  const claimed = new Set<string>();
  const issued: ActionGrant[] = [];
  const clock = { now: () => NOW };
  const store: Pick<PushSubscriptionStore, 'ofPersons'> = {
    ofPersons: async (_t, ids) => devices.filter((d) => ids.includes(d.personId)),
  };
  const sentNotifications: Pick<SentNotifications, 'claim' | 'told'> = {
    async claim(_t, call, channel, ids, kind: SentKind) {
      const fresh = ids.filter((id) => !claimed.has(`${call}|${channel}|${id}|${kind}`));
      fresh.forEach((id) => claimed.add(`${call}|${channel}|${id}|${kind}`));
      return new Set(fresh);
    },
    async told(_t, call, channel) {
      return [...claimed]
        .map((k) => k.split('|'))
        .filter(([c, ch]) => c === call && ch === channel)
        .map(([, , id]) => id);
    },
  };
  const sender: Pick<PushSender, 'send'> = {
    async send(s, payload, opts) {
      sent.push({ to: s.id, message: JSON.parse(payload), opts });
      return 'sent';
    },
  };
  const links = new ActionLinks(
    {
      issue: async (g) => {
        issued.push(g);
        return `${g.person}.${g.decision}.${issued.length}`;
      },
    },
    { url: () => 'https://tollgate.example.com' } as PublicAddress,
  );
  const callback = new PushApprovalCallback(
    new Deciders(new People(people) as unknown as PersonRepository, clock),
    links,
    store as PushSubscriptionStore,
    sentNotifications as SentNotifications,
    sender as PushSender,
    planner as ReachPlanner,
    loadConfig({}),
    clock,
  );
  return { callback, sent, issued, planned };
}

describe('PushApprovalCallback', () => {
  it("sends each person who may decide a notification on every device, with that person's own tokens", async () => {
    const { callback, sent, issued } = setup(
      [person('ann', ['approver']), person('bob', ['approver']), person('ida', ['auditor'])],
      [device('ann', 'ps_a1'), device('ann', 'ps_a2'), device('bob', 'ps_b1'), device('ida', 'ps_i1')],
    );
    await callback.ask(request());
    expect(sent.map((s) => s.to).sort()).toEqual(['ps_a1', 'ps_a2', 'ps_b1']);
    const ann = sent.filter((s) => s.to.startsWith('ps_a')).map((s) => s.message);
    expect(ann[0]).toEqual(ann[1]); // one pair of tokens for the person, whichever device uses it first
    expect(ann[0]).toMatchObject({ kind: 'ask', toolCallId: 'tc_1', approve: 'ann.approve.1', reject: 'ann.reject.2' });
    expect(sent.find((s) => s.to === 'ps_b1')!.message.approve).toMatch(/^bob\.approve/);
    // Bound to the call, the person, the exact arguments and the deadline.
    expect(issued.find((g) => g.person === 'bob' && g.decision === 'approve')).toMatchObject({
      toolCallId: 'tc_1',
      via: 'push',
      tenant: 'acme',
      expiresAt: new Date('2026-03-02T10:05:00.000Z'),
      argumentsDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(sent[0].opts).toMatchObject({ ttlSeconds: 300, urgency: 'high', topic: expect.any(String) });
  });

  it('sends nothing twice when the event is delivered again', async () => {
    const { callback, sent } = setup([person('ann', ['approver'])], [device('ann', 'ps_a1')]);
    await callback.ask(request());
    await callback.ask(request());
    expect(sent).toHaveLength(1);
  });

  it('withholds Approve for a passkey rule and for arguments too long to show, and issues no approve token', async () => {
    const { callback, sent, issued } = setup([person('ann', ['approver'])], [device('ann', 'ps_a1')]);
    await callback.ask(request({ id: 'tc_pk', approval: { ...request().approval!, stepUp: 'passkey' } }));
    await callback.ask(request({ id: 'tc_long', arguments: { memo: 'x'.repeat(400), amount: 950000 } }));
    expect(sent.map((s) => [s.message.toolCallId, s.message.approve, s.message.approveWithheld])).toEqual([
      ['tc_pk', undefined, 'passkey'],
      ['tc_long', undefined, 'too_long'],
    ]);
    expect(issued.filter((g) => g.decision === 'approve')).toEqual([]);
    expect(sent[1].message.body).not.toContain('950000'); // what is not shown whole is not shown cut
  });

  it('reaches only the people an escalation adds, and says why', async () => {
    const { callback, sent } = setup(
      [person('ann', ['approver']), person('root', ['admin'])],
      [device('ann', 'ps_a1'), device('root', 'ps_r1')],
    );
    await callback.ask(request());
    const escalated = request({ approval: { ...request().approval!, approvers: ['approver', 'admin'] } });
    await callback.remind(escalated, { kind: 'escalated', text: 'Escalated after 60 s: approver, admin may decide' });
    expect(sent.map((s) => s.to)).toEqual(['ps_a1', 'ps_r1']);
    expect(sent[1].message).toMatchObject({ renotify: true, body: expect.stringMatching(/^Escalated after 60 s/) });
    await callback.remind(escalated, { kind: 'reminder', text: 'Reminder: this request expires in 1 min' });
    await callback.remind(escalated, { kind: 'reminder', text: 'Reminder: this request expires in 1 min' });
    expect(sent.slice(2).map((s) => s.to)).toEqual(['ps_a1', 'ps_r1']); // one reminder each
  });

  it('reaches no one for a call already decided or past its deadline, nor the conversation user refused self-approval', async () => {
    const { callback, sent } = setup(
      [person('ann', ['approver']), person('lee', ['approver'])],
      [device('ann', 'ps_a1'), device('lee', 'ps_l1')],
    );
    await callback.ask(request({ status: 'approved' }));
    await callback.ask(request({ approval: { ...request().approval!, expiresAt: '2026-03-02T09:59:00.000Z' } }));
    expect(sent).toEqual([]);
    await callback.ask(request({ approval: { ...request().approval!, selfApproval: false } }));
    expect(sent.map((s) => s.to)).toEqual(['ps_a1']);
  });

  it("follows each person's settings: none to those who turned push off, a digest planned for those who want one", async () => {
    const { callback, sent, planned } = setup(
      [
        person('ann', ['approver']),
        person('bob', ['approver']),
        person('cy', ['approver']),
        person('di', ['approver']),
      ],
      [device('ann', 'ps_a1'), device('bob', 'ps_b1'), device('cy', 'ps_c1')],
      { bob: 'off', cy: 'digest', di: 'digest' },
    );
    await callback.ask(request());
    expect(sent.map((s) => s.to)).toEqual(['ps_a1']);
    expect(planned).toEqual([{ person: 'cy', channel: 'push' }]); // di has no device: no digest planned
  });

  it('sends a digest to every device of the person: how many wait and their titles, without actions', async () => {
    const { callback, sent } = setup([], [device('ann', 'ps_a1'), device('ann', 'ps_a2'), device('bob', 'ps_b1')]);
    const calls = ['Deploy billing', 'Pay ACME'].map((title, i) => request({ id: `tc_${i}`, display: { title } }));
    await callback.sendDigest(person('ann', ['approver']), calls, true);
    expect(sent.map((s) => s.to)).toEqual(['ps_a1', 'ps_a2']);
    expect(sent[0].message).toEqual({
      v: 1,
      kind: 'digest',
      title: '2+ requests wait for you',
      body: '• Deploy billing\n• Pay ACME\nand more',
    });
    expect(sent[0].opts).toMatchObject({ urgency: 'normal', topic: 'tollgate-digest' });
  });

  it('replaces the notification of everyone told with the outcome, and no one else', async () => {
    const { callback, sent } = setup(
      [person('ann', ['approver']), person('bob', ['admin'])],
      [device('ann', 'ps_a1'), device('bob', 'ps_b1')],
    );
    await callback.ask(request());
    const call = request();
    await callback.tell({
      tenantId: 'acme',
      outcome: 'approved',
      toolCall: call,
      by: { id: 'ann', name: 'Ann', via: 'push' },
    });
    expect(sent.map((s) => [s.to, s.message.kind])).toEqual([
      ['ps_a1', 'ask'],
      ['ps_a1', 'outcome'],
    ]);
    expect(sent[1].message).toMatchObject({ title: 'Approved: deploy', body: 'deploy · by Ann via a notification' });
    expect(sent[1].opts.urgency).toBe('normal');
  });
});
