/** The pieces of four eyes on the control plane (pending changes), mounted by the composition root. */
import { ChangesController } from './adapters/http/controllers/changes.controller';
import {
  ApproveChangeHandler,
  ExpireChangesHandler,
  RejectChangeHandler,
} from './application/commands/changes/change.handlers';
import { GovernanceGate } from './application/commands/changes/governance-gate';
import { PENDING_CHANGES } from './application/ports/pending-change.port';
import { GetChangeHandler, ListChangesHandler } from './application/queries/changes/changes.queries';
import { SqlPendingChangeRepository } from './infrastructure/persistence/sql-pending-change.repository';
import { ChangeExpirySweeper } from './infrastructure/scheduling/change-expiry-sweeper';

export const GOVERNANCE_CONTROLLERS = [ChangesController];

export const GOVERNANCE_PROVIDERS = [
  { provide: PENDING_CHANGES, useClass: SqlPendingChangeRepository },
  GovernanceGate,
  ApproveChangeHandler,
  RejectChangeHandler,
  ExpireChangesHandler,
  ListChangesHandler,
  GetChangeHandler,
  ChangeExpirySweeper,
];
