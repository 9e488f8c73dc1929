import type { QueryBus } from '@nestjs/cqrs';
import { Access, ConversationAccessQuery, ToolCallAccessQuery } from '../../application/queries/access/access.query';
import { QuestionAccessQuery } from '../../application/queries/questions/question.queries';
import type { Principal } from '../../domain/shared/actor';
import { ForbiddenError } from './errors';

/**
 * The one order of checks, for every transport: 401 (AuthGuard, GrpcServer) → 404 → 403 → 400 → 409/503.
 * `check` reads the request; only when it fails is the caller's access read, so a resource they cannot see is
 * still a 404 and an act they may not do a 403, without an extra read on every good request. The command checks
 * visibility and authority again, in its transaction.
 */
export async function accessBeforeFaults<T, A>(
  check: () => T,
  access: () => Promise<A>,
  allowed: (a: A) => boolean = () => true,
  refusal: (a: A) => string = () => 'Not allowed',
): Promise<T> {
  try {
    return check();
  } catch (e) {
    const a = await access(); // 404 when the caller cannot see it
    if (!allowed(a)) throw new ForbiddenError(refusal(a));
    throw e;
  }
}

/** What the caller may do with a tool call (404 when they may not see it). */
export const toolCallAccess = (queries: QueryBus, p: Principal, id: string) => (): Promise<Access> =>
  queries.execute(new ToolCallAccessQuery(p, id));

/** What the caller may do in a conversation (404 when they may not see it). */
export const conversationAccess = (queries: QueryBus, p: Principal, id: string) => (): Promise<Access> =>
  queries.execute(new ConversationAccessQuery(p, id));

/** Whether the caller may answer a question (404 when they may not see it). */
export const questionAccess = (queries: QueryBus, p: Principal, id: string) => () =>
  queries.execute(new QuestionAccessQuery(p, id));
