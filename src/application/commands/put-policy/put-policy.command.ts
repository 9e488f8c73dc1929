import { Actor } from '../../../domain/shared/actor';
import { Command } from '@nestjs/cqrs';
import type { policyView } from '../../views/views';
import type { PendingChangeView } from '../../views/change.view';

/** The policy as it now stands; `changed` is false when the document was the current one. */
export interface PutPolicyResult {
  policy: ReturnType<typeof policyView>;
  changed: boolean;
  /** Governance (four eyes) held the document for a second admin: the policy above is unchanged. */
  pendingChange?: PendingChangeView;
}

export class PutPolicyCommand extends Command<PutPolicyResult> {
  constructor(
    readonly tenantId: string,
    readonly by: Actor,
    /** The document as parsed from JSON or YAML; validated by the domain. */
    readonly document: unknown,
    readonly opts: {
      onlyIfChanged?: boolean;
      source?: string;
      /** Applying this approved pending change: no gate. */ approvedChange?: string;
    } = {},
  ) {
    super();
  }
}
