import { Actor } from '../../../domain/shared/actor';

export class PutPolicyCommand {
  constructor(
    readonly tenantId: string,
    readonly by: Actor,
    /** The document as parsed from JSON or YAML; validated by the domain. */
    readonly document: unknown,
    readonly opts: { onlyIfChanged?: boolean; source?: string } = {},
  ) {}
}
