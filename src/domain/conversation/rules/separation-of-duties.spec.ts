import { selfApprovalRefusal } from './separation-of-duties';

const parties = { userId: 'uma', agentOwner: 'otto' };
const strict = { selfApproval: false as const };

describe('separation of duties', () => {
  it("refuses the conversation's user and the agent's owner an approval, naming which one they are", () => {
    expect(selfApprovalRefusal('approve', strict, 'uma', parties)).toContain("the conversation's user");
    expect(selfApprovalRefusal('always_allow', strict, 'otto', parties)).toContain("the agent's owner");
  });

  it('lets them reject, and lets anyone else approve', () => {
    expect(selfApprovalRefusal('reject', strict, 'uma', parties)).toBeUndefined();
    expect(selfApprovalRefusal('approve', strict, 'alice', parties)).toBeUndefined();
  });

  it('applies only where the deciding rule says selfApproval: false', () => {
    expect(selfApprovalRefusal('approve', {}, 'uma', parties)).toBeUndefined();
    expect(selfApprovalRefusal('approve', strict, 'uma', {})).toBeUndefined();
  });
});
