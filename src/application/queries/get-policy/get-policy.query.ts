export class GetPolicyQuery {
  constructor(readonly tenantId: string) {}
}
