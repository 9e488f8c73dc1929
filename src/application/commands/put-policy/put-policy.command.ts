import { Actor } from '../../../domain/shared/actor';
import { Command } from '@nestjs/cqrs';
import type { policyView } from '../../views/views';

/** The policy as it now stands; `changed` is false when the document was the current one. */
export interface PutPolicyResult {
  policy: ReturnType<typeof policyView>;
  changed: boolean;
}

export class PutPolicyCommand extends Command<PutPolicyResult> {
  constructor(
    readonly tenantId: string,
    readonly by: Actor,
    /** The document as parsed from JSON or YAML; validated by the domain. */
    readonly document: unknown,
    readonly opts: { onlyIfChanged?: boolean; source?: string } = {},
  ) {
    super();
  }
}
