/** Expires pending calls past their `expiresAt`: from the sweeper for all tenants, or for one conversation on read. */
export class ExpireToolCallsCommand {
  constructor(readonly target?: { tenantId: string; conversationId: string }) {}
}
