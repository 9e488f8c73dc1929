import { Query } from '@nestjs/cqrs';
import type { policyView } from '../../views/views';
export class GetPolicyQuery extends Query<ReturnType<typeof policyView>> {
  constructor(readonly tenantId: string) {
    super();
  }
}
