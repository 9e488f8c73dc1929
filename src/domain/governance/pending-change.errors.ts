import { DomainError } from '../shared/domain-error';
import type { ChangeStatus } from './pending-change.types';

export class ChangeNotFoundError extends DomainError {
  constructor(id: string) {
    super('not_found', 'not_found', `No pending change ${id}`);
  }
}

/** Four eyes: the admin who proposed a change is one of its quorum already and may not approve it again. */
export class ChangeSelfApprovalError extends DomainError {
  constructor() {
    super('self_approval', 'forbidden', 'You proposed this change: another admin must approve it');
  }
}

export class ChangeAlreadyApprovedError extends DomainError {
  constructor() {
    super('already_approved', 'conflict', 'You have approved this change already: another admin must approve it');
  }
}

export class ChangeNotPendingError extends DomainError {
  constructor(id: string, status: ChangeStatus) {
    super('change_not_pending', 'conflict', `Change ${id} is ${status}: it can no longer be approved or rejected`, {
      status,
    });
  }
}

/** Only admins decide changes of the control plane. */
export class ChangeDecisionForbiddenError extends DomainError {
  constructor() {
    super('forbidden', 'forbidden', 'Only admins approve or reject changes of the control plane');
  }
}

/** A policy change made against one version does not apply over another: it would undo what came between. */
export class PolicyMovedOnError extends DomainError {
  constructor(base: number, current: number) {
    super(
      'policy_moved_on',
      'conflict',
      `This change was made against policy version ${base}, and version ${current} is in force now: propose it again against the current version`,
      { baseVersion: base, currentVersion: current },
    );
  }
}

/** A resume proposed for one halt does not lift another: the halt it was for was lifted (and maybe pulled again). */
export class HaltMovedOnError extends DomainError {
  constructor(haltedAt: string, current: string | null) {
    super(
      'halt_moved_on',
      'conflict',
      current
        ? `This resume was proposed for the halt pulled at ${haltedAt}; that halt was lifted and the one in force was pulled at ${current}: propose a resume of it again`
        : `This resume was proposed for the halt pulled at ${haltedAt}, which is lifted already: nothing to resume`,
      { haltedAt, currentHaltedAt: current },
    );
  }
}
