import type { ChannelIdentity, Person } from '../person';
import { knownLink, linkByEmail, spanText, staleSignIn } from './channel-link';

const at = new Date('2026-01-01T00:00:00Z');
const person = (id: string, email?: string, roles: string[] = ['approver']): Person => ({
  tenantId: 't',
  id,
  roles,
  ...(email ? { email } : {}),
  firstSeenAt: at,
  lastSeenAt: at,
});
const link = (personId: string, linkedBy: 'config' | 'email'): ChannelIdentity => ({
  tenantId: 't',
  channel: 'slack',
  channelUser: 'U1',
  personId,
  linkedBy,
  linkedAt: at,
});

describe('which person a channel user is', () => {
  it("takes the settings' link over a stored email link, and stores it once", () => {
    const ann = person('ann');
    expect(knownLink({ configured: 'ann', configuredPerson: ann, stored: link('bob', 'email') })).toEqual({
      kind: 'person',
      person: ann,
      linkedBy: 'config',
      store: true,
    });
    expect(knownLink({ configured: 'ann', configuredPerson: ann, stored: link('ann', 'config') })).toMatchObject({
      kind: 'person',
      store: false,
    });
  });

  it('refuses a link to a person never seen: they have no roles on record', () => {
    expect(knownLink({ configured: 'nina', configuredPerson: null, stored: null })).toMatchObject({
      kind: 'unseen',
      personId: 'nina',
    });
  });

  it('no longer honours a stored link from settings the operator removed', () => {
    expect(knownLink({ configured: undefined, configuredPerson: null, stored: link('ann', 'config') })).toEqual({
      kind: 'ask-email',
    });
  });

  it('re-checks a stored email link against the email on every use rather than trusting it', () => {
    expect(knownLink({ configured: undefined, configuredPerson: null, stored: link('dora', 'email') })).toEqual({
      kind: 'ask-email',
      linkedBefore: 'dora',
    });
  });

  it('keeps an email link while the email still names the same person, without storing it again', () => {
    const dora = person('dora', 'dora@example.com');
    expect(linkByEmail('dora@example.com', [dora], 'dora')).toEqual({
      kind: 'person',
      person: dora,
      linkedBy: 'email',
      store: false,
    });
  });

  it('moves an email link to the person who now has the email, and drops it when no one or two have it', () => {
    const ann = person('ann', 'ann@example.com');
    expect(linkByEmail('ann@example.com', [ann], 'imposter')).toMatchObject({
      kind: 'person',
      person: ann,
      store: true,
    });
    expect(linkByEmail('ann@example.com', [], 'ann')).toMatchObject({
      kind: 'unlinked',
      reason: /link to "ann" by email no longer holds/,
    });
    expect(linkByEmail('ann@example.com', [ann, person('ann2', 'ann@example.com')], 'ann')).toMatchObject({
      kind: 'ambiguous',
      reason: /no longer holds/,
    });
  });

  it('leaves persons with no role out of the email match', () => {
    const ann = person('ann', 'ann@example.com');
    const squatter = person('squatter', 'ann@example.com', []);
    expect(linkByEmail('ann@example.com', [ann, squatter])).toMatchObject({ kind: 'person', person: ann });
    expect(linkByEmail('ann@example.com', [squatter])).toMatchObject({ kind: 'unlinked' });
  });

  it('links by email only to exactly one person', () => {
    const dora = person('dora', 'dora@example.com');
    expect(linkByEmail('dora@example.com', [dora])).toEqual({
      kind: 'person',
      person: dora,
      linkedBy: 'email',
      store: true,
    });
    expect(linkByEmail('x@example.com', [])).toMatchObject({ kind: 'unlinked' });
    expect(linkByEmail(undefined, [])).toMatchObject({ kind: 'unlinked', reason: /no verified email/ });
    expect(linkByEmail('d@example.com', [dora, person('dora2', 'd@example.com')])).toMatchObject({
      kind: 'ambiguous',
    });
  });

  it('refuses a person whose last sign-in is older than the bound, and only then', () => {
    const ann = person('ann');
    const week = 7 * 86_400;
    expect(staleSignIn(ann, new Date(at.getTime() + week * 1000), week)).toBeNull();
    expect(staleSignIn(ann, new Date(at.getTime() + week * 1000 + 1), week)).toEqual({
      kind: 'stale',
      personId: 'ann',
      maxAgeSeconds: week,
      reason: 'the last sign-in of "ann" on record is older than 7 days',
    });
  });

  it('says a span in its largest whole unit', () => {
    expect([86_400, 7 * 86_400, 3600 * 12, 90, 120, 1].map(spanText)).toEqual([
      '1 day',
      '7 days',
      '12 hours',
      '90 seconds',
      '2 minutes',
      '1 second',
    ]);
  });
});
