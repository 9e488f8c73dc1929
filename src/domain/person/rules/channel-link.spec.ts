import type { ChannelIdentity, Person } from '../person';
import { knownLink, linkByEmail } from './channel-link';

const at = new Date('2026-01-01T00:00:00Z');
const person = (id: string, email?: string): Person => ({
  tenantId: 't',
  id,
  roles: ['approver'],
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
    expect(
      knownLink({ configured: 'ann', configuredPerson: ann, stored: link('bob', 'email'), storedPerson: null }),
    ).toEqual({ kind: 'person', person: ann, linkedBy: 'config', store: true });
    expect(
      knownLink({ configured: 'ann', configuredPerson: ann, stored: link('ann', 'config'), storedPerson: null }),
    ).toMatchObject({ kind: 'person', store: false });
  });

  it('refuses a link to a person never seen: they have no roles on record', () => {
    expect(knownLink({ configured: 'nina', configuredPerson: null, stored: null, storedPerson: null })).toMatchObject({
      kind: 'unseen',
      personId: 'nina',
    });
  });

  it('no longer honours a stored link from settings the operator removed', () => {
    expect(
      knownLink({ configured: undefined, configuredPerson: null, stored: link('ann', 'config'), storedPerson: null }),
    ).toEqual({ kind: 'ask-email' });
  });

  it('keeps a stored email link', () => {
    const dora = person('dora');
    expect(
      knownLink({ configured: undefined, configuredPerson: null, stored: link('dora', 'email'), storedPerson: dora }),
    ).toEqual({ kind: 'person', person: dora, linkedBy: 'email', store: false });
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
});
