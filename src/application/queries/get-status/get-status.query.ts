import { Query } from '@nestjs/cqrs';
import type { haltView } from '../../views/views';
/** A tenant's halts in force; `halted` when the whole tenant is. */
export interface StatusView {
  tenant: string;
  halted: boolean;
  halts: ReturnType<typeof haltView>[];
}

export class GetStatusQuery extends Query<StatusView> {
  constructor(readonly tenantId: string) {
    super();
  }
}
