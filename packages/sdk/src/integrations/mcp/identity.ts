/**
 * Who the gateway's tokens are, asked of Tollgate at start (`GET /v1/me`): the gateway's own must be an agent's,
 * and fixes the tenant it serves; a configured user's token must be that very person's, in the same tenant, or a
 * client would decide in the chat as somebody else.
 */
import { TollgateError } from '../../errors.js';
import { Tollgate } from '../../tollgate.js';
import type { ConversationUserInput, Me } from '../../types.js';

/** A token that is not who the configuration says: the operator's to fix (the CLI exits 2). */
export class GatewayIdentityError extends Error {
  override readonly name = 'GatewayIdentityError';
}

/** The gateway's tenant, once its token and the user's check out. */
export async function checkIdentities(
  tollgate: Tollgate,
  user?: ConversationUserInput & { token?: string },
): Promise<string> {
  const gateway = await whoIs(tollgate, "the gateway's token (tollgate.token, TOLLGATE_TOKEN)");
  if (gateway.kind !== 'agent')
    throw new GatewayIdentityError(
      `the gateway's token is ${gateway.id}'s, a person's: give it an agent token (tollgate token --sub mcp-gateway --role agent)`,
    );
  if (user?.token) {
    const person = await whoIs(
      new Tollgate({
        url: tollgate.url,
        token: user.token,
        retry: { maxAttempts: 3 },
        headers: { 'user-agent': 'tollgate-mcp-gateway' },
      }),
      'user.token (TOLLGATE_USER_TOKEN)',
    );
    if (person.kind === 'agent')
      throw new GatewayIdentityError(`user.token is the agent ${person.id}'s: give ${user.id}'s own token, or none`);
    if (person.id !== user.id)
      throw new GatewayIdentityError(
        `user.token is ${person.id}'s, not ${user.id}'s (user.id): give ${user.id}'s own token, or none`,
      );
    if (person.tenant !== gateway.tenant)
      throw new GatewayIdentityError(
        `user.token is of the tenant ${person.tenant}, the gateway's token of ${gateway.tenant}: both must be of one tenant`,
      );
  }
  return gateway.tenant;
}

async function whoIs(tollgate: Tollgate, what: string): Promise<Me> {
  try {
    return await tollgate.me();
  } catch (e) {
    if (e instanceof TollgateError && (e.status === 401 || e.status === 403))
      throw new GatewayIdentityError(`Tollgate refused ${what} (${e.code}: ${e.detail})`);
    throw e;
  }
}
