import { standingGrantRefusal } from './standing-grant-limit';

const approver = { roles: ['approver'] };
const admin = { roles: ['admin'] };

describe('the standing grant limit', () => {
  it("lets a grant through within both the decider's roles and the rule's `grants`", () => {
    expect(standingGrantRefusal({ rule: 0 }, 'conversation', approver)).toBeUndefined();
    expect(standingGrantRefusal({ rule: 0 }, 'tenant', admin)).toBeUndefined();
  });

  it("names the rule's bound first: even an admin meets it", () => {
    expect(standingGrantRefusal({ rule: 2, grants: 'agent' }, 'tenant', admin)).toEqual({
      requestedScope: 'tenant',
      allowedScope: 'agent',
      reason: 'A standing grant for this call may cover at most scope agent (policy rule 2), not tenant',
    });
    expect(standingGrantRefusal({ rule: null, grants: 'none' }, 'conversation', admin)?.reason).toBe(
      'No standing grant may be made for this call (the policy defaults: grants none); approve it instead',
    );
  });

  it("then the roles' bound: an approver grants at most what their roles allow", () => {
    const refusal = standingGrantRefusal({ rule: 0 }, 'tenant', approver);
    expect(refusal).toMatchObject({ requestedScope: 'tenant' });
    expect(refusal?.reason).toMatch(/^Only an admin may make a standing grant in scope tenant/);
  });
});
