/** The tab badge and the choice of what a desktop notification tells, without a browser. */
import { badgedIcon, badgeText, pageTitle } from '../../web/src/badge';
import { notificationFor, worthNotifying } from '../../web/src/notify';
import type { Approval } from '../../web/src/types';

const ICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32"/></svg>';

function approval(id: string, user: Approval['conversation']['user'], extra: Partial<Approval> = {}): Approval {
  return {
    id,
    conversationId: 'conv-1',
    toolName: 'send_email',
    arguments: {},
    status: 'pending',
    policy: { level: 'confirm', rule: null, policyVersion: 1, reason: 'no rule matched' },
    createdAt: '2025-01-01T10:00:00.000Z',
    updatedAt: '2025-01-01T10:00:00.000Z',
    conversation: { id: 'conv-1', agentId: 'bot', user, title: null },
    ...extra,
  };
}

describe('the tab badge', () => {
  it('puts the count in the title, and nothing at zero', () => {
    expect(pageTitle(3)).toBe('(3) Tollgate inbox');
    expect(pageTitle(0)).toBe('Tollgate inbox');
  });

  it('draws the count in a dot on the icon, "99+" past 99, and leaves the icon alone at zero', () => {
    expect(badgedIcon(ICON, 0)).toBe(ICON);
    const three = badgedIcon(ICON, 3);
    expect(three.startsWith(ICON.replace('</svg>', ''))).toBe(true);
    expect(three).toMatch(/<circle [^>]*\/><text [^>]*>3<\/text><\/svg>$/);
    expect(badgeText(42)).toBe('42');
    expect(badgeText(120)).toBe('99+');
    expect(badgedIcon(ICON, 120)).toContain('>99+</text>');
  });
});

describe('desktop notifications', () => {
  it('are not for requests made on the person’s own behalf', () => {
    const mine = approval('a', { id: 'ann', roles: [], assurance: 'asserted' });
    const lees = approval('b', { id: 'lee', roles: [], name: 'Lee', assurance: 'asserted' });
    const nobodys = approval('c', null);
    expect(worthNotifying([mine, lees, nobodys], 'ann').map((c) => c.id)).toEqual(['b', 'c']);
  });

  it('name the request when one came, and count them when several did', () => {
    const one = approval(
      'a',
      { id: 'lee', roles: [], name: 'Lee', assurance: 'asserted' },
      { display: { title: 'Send the invoice', summary: 'Email invoice 42' } },
    );
    expect(notificationFor([one])).toEqual({
      title: 'Approve? Send the invoice',
      body: 'Email invoice 42 — from bot for Lee',
      tag: 'tollgate-call-a',
    });
    const plain = approval('b', null);
    expect(notificationFor([plain])).toEqual({
      title: 'Approve? send_email',
      body: 'send_email — from bot',
      tag: 'tollgate-call-b',
    });
    expect(notificationFor([one, plain])).toEqual({
      title: '2 new requests to approve',
      body: 'Send the invoice · send_email',
    });
  });
});
