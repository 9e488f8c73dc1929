import { Query } from '@nestjs/cqrs';
import type { toolView } from '../../views/views';
export class GetToolQuery extends Query<ReturnType<typeof toolView>> {
  constructor(
    readonly tenantId: string,
    readonly name: string,
  ) {
    super();
  }
}
