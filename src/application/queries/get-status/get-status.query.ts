export class GetStatusQuery {
  constructor(readonly tenantId: string) {}
}
