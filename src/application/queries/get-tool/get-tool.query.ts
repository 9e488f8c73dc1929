export class GetToolQuery {
  constructor(
    readonly tenantId: string,
    readonly name: string,
  ) {}
}
