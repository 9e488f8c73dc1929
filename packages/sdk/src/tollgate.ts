import { ID_PATTERN, newId } from './ids.js';
import { Inbox } from './inbox.js';
import { Passkeys } from './passkeys.js';
import { TollgateConversation } from './conversation.js';
import { Questions, type Question } from './questions.js';
import { allPages, TollgateClient, type DecisionChannel, type WaitOptions } from './client.js';
import type { Query } from './http.js';
import type { Grant, GrantPage, GrantScope, GrantStatus, StartConversationRequest } from './types.js';

// Still importable from here, as before the client's operations moved to client.ts.
export {
  allPages,
  TollgateClient,
  type AuditQuery,
  type DecisionChannel,
  type TollgateOptions,
  type WaitOptions,
} from './client.js';

/**
 * The Tollgate client: agents start conversations and guard tool calls with it, approvers read and decide
 * their inbox, and any program reaches the rest of the API. Methods are named after the API's operationIds.
 */
export class Tollgate extends TollgateClient {
  /**
   * Starts a conversation, or takes up the one with this id (the same id from the same agent answers it as it
   * is). Without an id one is made here, before the first attempt, so a retried start never makes two.
   */
  async conversation(
    input: StartConversationRequest | string = {},
    options: WaitOptions = {},
  ): Promise<TollgateConversation<this>> {
    const body: StartConversationRequest = typeof input === 'string' ? { id: input } : { ...input };
    body.id ??= newId('conv');
    if (!ID_PATTERN.test(body.id))
      throw new TypeError(`conversation id ${JSON.stringify(body.id)} must match ${ID_PATTERN}`);
    const view = await this.startConversation(body, options);
    return new TollgateConversation(this, view);
  }

  /* ── people ─────────────────────────────────────────────────────────────────────────────────────────── */

  /** For approver programs: the calls the caller may decide, decisions, and the live event stream. */
  inbox(): Inbox {
    return new Inbox(this);
  }

  /**
   * The tenant's standing grants (approvers, admins, auditors): `list` one page, newest first (active ones by
   * default), `all` of them, and `revoke` one (admins any; approvers a conversation grant). A revoked grant
   * stops applying at the next proposal.
   */
  get grants(): Grants {
    return new Grants(this);
  }

  /**
   * The caller's own passkeys (people only; /v1/me/passkeys): `list`, `registrationOptions`, `register`,
   * `assertionOptions`, `remove`. Named `passkeys`, not `me.passkeys`: `me()` is the caller as the token says.
   */
  get passkeys(): Passkeys {
    return new Passkeys(this);
  }

  /** Questions agents ask people: `pending()` for a UI, `list`, `get`, `wait`, `answer` (agents use `conv.ask`). */
  get questions(): Questions {
    return new Questions(this);
  }

  /** Answers a question (people only); the first answer wins (operationId answerQuestion). */
  answer(questionId: string, answer: string, o: WaitOptions & { channel?: DecisionChannel } = {}): Promise<Question> {
    return this.questions.answer(questionId, answer, o);
  }
}

export interface GrantQuery {
  /** Only this tool's grants. */
  tool?: string;
  scope?: GrantScope;
  /** Default `active`: the grants that apply now. */
  status?: GrantStatus | 'all';
  cursor?: string;
  limit?: number;
}

/** `tollgate.grants`: list and revoke standing grants. */
export class Grants {
  constructor(private readonly tollgate: Tollgate) {}

  /** One page, newest first (operationId listGrants). */
  list(q: GrantQuery = {}, o: WaitOptions = {}): Promise<GrantPage> {
    return this.tollgate.request<GrantPage>('GET', '/v1/grants', { query: q as Query, signal: o.signal });
  }

  /** Every page of `list` (at most `max` items, 10,000 by default). */
  all(q: Omit<GrantQuery, 'cursor' | 'limit'> & { max?: number } = {}, o: WaitOptions = {}): Promise<Grant[]> {
    const { max, ...rest } = q;
    return allPages((cursor) => this.list({ ...rest, limit: 1000, cursor }, o), max);
  }

  /**
   * Revokes a grant; answers it as it now stands (operationId revokeGrant). Revoking a revoked grant answers it
   * unchanged. Recorded as `GrantRevoked`, with the client's `channel` as `via`.
   */
  revoke(id: string, reason?: string, o: WaitOptions & { channel?: DecisionChannel } = {}): Promise<Grant> {
    return this.tollgate.request<Grant>('DELETE', `/v1/grants/${enc(id)}`, {
      body: reason === undefined ? {} : { reason },
      signal: o.signal,
      headers: this.tollgate.channelHeader(o.channel),
    });
  }
}

const enc = encodeURIComponent;
