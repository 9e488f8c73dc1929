import fc from 'fast-check';
import { mayRevokeDeny, mayRevokeGrant } from './grant-authority';

const ROLES = ['admin', 'approver', 'auditor', 'requester', 'agent'];

describe('mayRevokeDeny (revoking a standing deny loosens)', () => {
  it('an approver may not lift another person’s conversation deny, even though they may revoke its allow twin', () => {
    const bea = { id: 'bea', roles: ['approver'] };
    expect(mayRevokeGrant(bea, 'conversation')).toBe(true);
    expect(mayRevokeDeny(bea, 'conversation', 'ann')).toBe(false);
    expect(mayRevokeDeny(bea, 'conversation', 'bea')).toBe(true);
    expect(mayRevokeDeny(bea, 'tenant', 'bea')).toBe(false);
    expect(mayRevokeDeny({ id: 'bob', roles: ['admin'] }, 'tenant', 'ann')).toBe(true);
  });

  it('only admins and (in a conversation) its maker, never an agent', () => {
    fc.assert(
      fc.property(
        fc.subarray(ROLES),
        fc.constantFrom('conversation' as const, 'tenant' as const),
        fc.boolean(),
        (roles, scope, isMaker) => {
          const may = mayRevokeDeny({ id: 'p', roles }, scope, isMaker ? 'p' : 'someone-else');
          const expected =
            !roles.includes('agent') && (roles.includes('admin') || (scope === 'conversation' && isMaker));
          expect(may).toBe(expected);
        },
      ),
    );
  });
});
