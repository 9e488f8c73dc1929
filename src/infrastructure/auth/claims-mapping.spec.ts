import { claimAt, groupsOf, mapClaims, rolesFor } from './claims-mapping';

const MAP = { 'payments-leads': ['approver'], secops: ['admin', 'approver'], audit: ['auditor'] };

describe('provider claims → a Tollgate person', () => {
  it('reads groups from an array, or from one string separated by spaces or commas', () => {
    expect(groupsOf(['a', 'b'])).toEqual(['a', 'b']);
    expect(groupsOf('a b,c ,  d')).toEqual(['a', 'b', 'c', 'd']);
    expect(groupsOf(['a', 7, null, '', 'b'])).toEqual(['a', 'b']);
    expect(groupsOf(undefined)).toEqual([]);
    expect(groupsOf({ a: 1 })).toEqual([]);
    expect(groupsOf(Array.from({ length: 5000 }, (_, i) => `g${i}`))).toHaveLength(1000);
    expect(groupsOf(['x'.repeat(513), 'ok'])).toEqual(['ok']);
  });

  it('maps groups through the role map, each role once, in a fixed order', () => {
    expect(rolesFor(['secops', 'payments-leads', 'nobody'], MAP)).toEqual(['approver', 'admin']);
    expect(rolesFor(['audit'], MAP)).toEqual(['auditor']);
    expect(rolesFor(['approver', 'admin'], MAP)).toEqual([]); // with a map, names are not roles by themselves
  });

  it('with an empty map takes the values as roles, but only approver, admin and auditor (never agent)', () => {
    expect(rolesFor(['admin', 'agent', 'root', 'auditor'], {})).toEqual(['admin', 'auditor']);
    expect(rolesFor(['agent'], {})).toEqual([]);
  });

  it('reads a claim by a dotted path when no claim has the whole name (Keycloak realm_access.roles)', () => {
    const claims = { realm_access: { roles: ['secops'] }, 'https://example.com/groups': ['audit'] };
    expect(claimAt(claims, 'realm_access.roles')).toEqual(['secops']);
    expect(claimAt(claims, 'https://example.com/groups')).toEqual(['audit']);
    expect(claimAt(claims, 'realm_access.nope.deeper')).toBeUndefined();
  });

  it('takes the tenant from its claim or the fixed tenant, and refuses a claim that names no tenant', () => {
    const base = { rolesClaim: 'groups', roleMap: MAP };
    const ann = { sub: 'ann', groups: ['secops'], org: 'acme', name: 'Ann', email: 'ann@acme.example' };
    expect(mapClaims(ann, { ...base, tenant: { claim: 'org' } })).toEqual({
      ok: true,
      principal: { id: 'ann', tenant: 'acme', roles: ['approver', 'admin'], name: 'Ann', email: 'ann@acme.example' },
    });
    expect(mapClaims(ann, { ...base, tenant: { fixed: 'one' } })).toMatchObject({
      ok: true,
      principal: { tenant: 'one' },
    });
    for (const org of [undefined, '', 'a/b', 'x'.repeat(129), 7])
      expect(mapClaims({ ...ann, org }, { ...base, tenant: { claim: 'org' } })).toMatchObject({
        ok: false,
        code: 'bad_claims',
      });
  });

  it('says who a person with no mapped role is, with no roles, and refuses claims with no usable sub', () => {
    const mapping = { rolesClaim: 'groups', roleMap: MAP, tenant: { fixed: 'default' } };
    expect(mapClaims({ sub: 'ivan', groups: ['interns'] }, mapping)).toEqual({
      ok: false,
      code: 'no_role',
      detail: 'None of the groups in the claim "groups" maps to a Tollgate role',
      person: { id: 'ivan', tenant: 'default', roles: [] },
      groups: ['interns'],
      claimMissing: false,
    });
    for (const sub of [undefined, '', 'x'.repeat(257), 42])
      expect(mapClaims({ sub, groups: ['secops'] }, mapping)).toMatchObject({ ok: false, code: 'bad_claims' });
  });

  it('tells a roles claim that is absent (a provider or scope setting) from groups that map to nothing', () => {
    const mapping = { rolesClaim: 'groups', roleMap: MAP, tenant: { fixed: 'default' } };
    for (const claims of [{ sub: 'ivan' }, { sub: 'ivan', groups: null }])
      expect(mapClaims(claims, mapping)).toMatchObject({
        ok: false,
        code: 'no_role',
        claimMissing: true,
        groups: [],
        detail:
          'The ID token and userinfo had no "groups" claim: make the provider put it in the ID token, and request its scope in TOLLGATE_OIDC_SCOPES',
      });
    // Present but empty is a person in no group, not a missing claim.
    expect(mapClaims({ sub: 'ivan', groups: [] }, mapping)).toMatchObject({ claimMissing: false });
  });

  it('leaves out a malformed email or an overlong name rather than refusing the person', () => {
    const mapping = { rolesClaim: 'groups', roleMap: MAP, tenant: { fixed: 'default' } };
    const r = mapClaims({ sub: 'ann', groups: ['audit'], email: 'not an email', name: 'n'.repeat(300) }, mapping);
    expect(r).toEqual({ ok: true, principal: { id: 'ann', tenant: 'default', roles: ['auditor'] } });
  });

  it('leaves out an email the provider says it has not verified: it would link a Slack user to whoever typed it', () => {
    const mapping = { rolesClaim: 'groups', roleMap: MAP, tenant: { fixed: 'default' } };
    const claims = { sub: 'eve', groups: ['audit'], email: 'ann@acme.example' };
    expect(mapClaims({ ...claims, email_verified: false }, mapping)).toMatchObject({ principal: { id: 'eve' } });
    expect(mapClaims({ ...claims, email_verified: false }, mapping)).not.toHaveProperty('principal.email');
    for (const verified of [true, undefined])
      // providers that send no email_verified (Entra ID) vouch for the address
      expect(mapClaims({ ...claims, email_verified: verified }, mapping)).toHaveProperty(
        'principal.email',
        'ann@acme.example',
      );
  });
});
