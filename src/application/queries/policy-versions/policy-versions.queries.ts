export class ListPolicyVersionsQuery {
  constructor(
    readonly tenantId: string,
    readonly page: { cursor?: string; limit: number },
  ) {}
}

export class GetPolicyVersionQuery {
  constructor(
    readonly tenantId: string,
    readonly version: number,
  ) {}
}
