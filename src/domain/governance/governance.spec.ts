import { PolicyDocument } from '../policy/policy-document';
import { governanceOf } from './governance';

describe('governanceOf', () => {
  it('reads the quorum a policy document sets at its top level', () => {
    expect(governanceOf(PolicyDocument.parse({ governance: { quorum: 2 }, rules: [] }))).toEqual({ quorum: 2 });
    expect(governanceOf(PolicyDocument.parse({ governance: { quorum: 10 }, rules: [] }))).toEqual({ quorum: 10 });
  });

  it('is none without it, or with a quorum of 1: changes take effect at once, as before', () => {
    expect(governanceOf(PolicyDocument.parse({ rules: [] }))).toBeNull();
    expect(governanceOf(PolicyDocument.parse({ governance: { quorum: 1 }, rules: [] }))).toBeNull();
  });
});
