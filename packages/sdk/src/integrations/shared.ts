/** What the framework integrations share: which conversation, the idempotency key, and the refusal text. */
import type { TollgateConversation } from '../conversation.js';
import { ToolCallRejectedError } from '../errors.js';
import type { Display, JsonObject } from '../types.js';

/** A conversation, or a function of the call that finds (or starts) one. */
export type ConversationSource<C> =
  TollgateConversation | ((context: C) => TollgateConversation | Promise<TollgateConversation>);

export async function conversationOf<C>(source: ConversationSource<C>, context: C): Promise<TollgateConversation> {
  return typeof source === 'function' ? source(context) : source;
}

/**
 * The idempotency key of a framework's tool call (the call's `externalId`, unique within its conversation):
 * the framework's id itself; the SDK hashes one the API would refuse.
 */
export function toolCallIdOf(frameworkId: string | undefined): string | undefined {
  return frameworkId === undefined || frameworkId === '' ? undefined : frameworkId;
}

/** A value, or a function of the arguments giving it. */
export type OfArgs<A, T> = T | ((args: A) => T | undefined);

export interface GateOptions<A> {
  /** What people are shown. */
  display?: OfArgs<A, Display>;
  /** Why the agent wants it, shown to people. */
  reason?: OfArgs<A, string>;
  /** The tool's flags (e.g. `{ destructive: true }`), counted when the tool is not registered with Tollgate. */
  annotations?: import('../types.js').ToolAnnotations;
  /**
   * What the model is told when the call does not run. Default: the refusal's message, e.g.
   * "delete_source was rejected by Ann via web: not today".
   */
  onRefusal?: (error: ToolCallRejectedError) => unknown;
}

/** The guard options of a GateOptions. */
export function guardOptions<A extends JsonObject>(o: GateOptions<A>) {
  return {
    ...(o.display !== undefined ? { display: o.display } : {}),
    ...(o.reason !== undefined ? { reason: o.reason } : {}),
    ...(o.annotations !== undefined ? { annotations: o.annotations } : {}),
  };
}

/** A refusal becomes the text the model reads; anything else is thrown on. */
export function refusalOrThrow(e: unknown, onRefusal: GateOptions<never>['onRefusal']): unknown {
  if (!(e instanceof ToolCallRejectedError)) throw e;
  // A person's `respond` is the tool's answer as they wrote it.
  return onRefusal ? onRefusal(e) : (e.response ?? e.message);
}
