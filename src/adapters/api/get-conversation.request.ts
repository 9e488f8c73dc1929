import type { QueryBus } from '@nestjs/cqrs';
import { GetConversationQuery } from '../../application/queries/get-conversation/get-conversation.query';
import type { Principal } from '../../domain/shared/actor';
import { accessBeforeFaults, conversationAccess } from './precedence';
import { idsParam } from './request-params';

/** How many external ids one read may name: a step's worth of calls, as a proposal holds at most. */
export const MAX_EXTERNAL_IDS = 64;

/**
 * GET /v1/conversations/{id}, Tollgate.GetConversation. `externalId` (1 to 64) answers only the calls of those
 * external ids, looked up one by one rather than read with the whole conversation: a hook in its own process
 * finds the call it reports without reading every call of a long session. A bad one is a 400 only for a caller
 * who may see the conversation (404 first).
 */
export async function getConversation(
  queries: QueryBus,
  p: Principal,
  conversationId: string,
  externalId: unknown,
): Promise<GetConversationQuery> {
  const externalIds = await accessBeforeFaults(
    () => idsParam('externalId', externalId, MAX_EXTERNAL_IDS),
    conversationAccess(queries, p, conversationId),
  );
  return new GetConversationQuery(p, conversationId, externalIds);
}
