/**
 * Ports: what the application needs from the outside world, as DI tokens + interfaces.
 * Infrastructure provides the implementations; tests may provide in-memory ones.
 */
import type { Conversation } from '../../domain/conversation/conversation.aggregate';
import type { Grant } from '../../domain/grant/grant.aggregate';
import type { Halt, HaltTarget } from '../../domain/halt/halt.aggregate';
import type { TenantPolicy } from '../../domain/policy/tenant-policy.aggregate';
import type { Tool } from '../../domain/tool/tool.aggregate';
import type { Webhook } from '../../domain/webhook/webhook.aggregate';
import type { HaltInForce } from '../../domain/conversation/conversation.aggregate';
import type { ToolCallState } from '../../domain/conversation/tool-call.entity';
import type { StoredEvent } from './stored-event';
import type { Principal } from '../../domain/shared/actor';
import type { ApprovalView, ConversationView, Page, toolView } from '../views/views';

export const CONVERSATIONS = Symbol('ConversationRepository');
export const TOOLS = Symbol('ToolRepository');
export const POLICIES = Symbol('PolicyRepository');
export const GRANTS = Symbol('GrantRepository');
export const HALTS = Symbol('HaltRepository');
export const CLOCK = Symbol('Clock');
export const IDS = Symbol('IdGenerator');
export const UNIT_OF_WORK = Symbol('UnitOfWork');
export const RECEIPTS = Symbol('ReceiptSigner');
export const WAITERS = Symbol('ToolCallWaiters');
export const READ_MODEL = Symbol('ReadModel');
export const POLICY_INPUTS = Symbol('PolicyInputsReader');
export const WEBHOOKS = Symbol('WebhookRepository');

export interface LoadOptions {
  /**
   * Take a row lock for the rest of the unit of work (commands that change the aggregate);
   * `skip-locked` answers null instead of waiting when another transaction holds it (sweepers).
   */
  lock?: boolean | 'skip-locked';
  /**
   * Which tool calls come with a conversation: all of them (the default, for reads that show it), or only
   * those in the given statuses plus those named (by id or external id). A command needs no more — pending
   * calls decide blocking and expiry, approved ones halts — so its cost does not grow with the conversation's
   * history (nor with approved calls an agent never claimed). The aggregate lists no calls either way: reads
   * that show them use `findWithCalls`.
   */
  calls?: 'all' | { statuses: readonly OpenStatus[]; ids?: string[]; externalIds?: string[] };
}

/** The statuses a command may ask a conversation to be loaded with (see LoadOptions.calls). */
export type OpenStatus = 'pending' | 'approved' | 'executed';
export const PENDING: readonly OpenStatus[] = ['pending'];
/** What a halt cancels: pending calls and approved ones not yet claimed. */
export const UNCLAIMED: readonly OpenStatus[] = ['pending', 'approved'];

/** A conversation as reads show it: the aggregate (which lists no calls) and, beside it, its calls (all, or those asked for). */
export interface ConversationWithCalls {
  conversation: Conversation;
  toolCalls: ToolCallState[];
}

export interface ConversationRepository {
  findById(tenantId: string, id: string, opts?: LoadOptions): Promise<Conversation | null>;
  findByToolCallId(tenantId: string, toolCallId: string, opts?: LoadOptions): Promise<Conversation | null>;
  /**
   * The conversation and every call it holds, oldest first, read together (one snapshot): what reads show. With
   * `externalIds` (at least one), only the calls of those external ids, each found on its index: what a process
   * that knows its framework's call ids reads, at a cost that does not grow with the conversation.
   */
  findWithCalls(
    tenantId: string,
    id: string,
    only?: { externalIds: readonly string[] },
  ): Promise<ConversationWithCalls | null>;
  /** Inserts or updates (version-checked) the conversation and its changed calls, and appends its events. */
  save(conversation: Conversation): Promise<void>;
  /** Ids of the tenant's conversations in the target's scope that hold pending or approved-but-unclaimed calls. */
  findWithOpenCalls(tenantId: string, target: HaltTarget): Promise<string[]>;
  /** Conversations holding pending calls whose expiry has passed, across tenants. */
  findWithDueExpiries(now: Date, limit: number): Promise<Array<{ tenantId: string; conversationId: string }>>;
}

export interface ToolRepository {
  find(tenantId: string, name: string, opts?: LoadOptions): Promise<Tool | null>;
  findMany(tenantId: string, names: string[]): Promise<Tool[]>;
  /** Every tool of the tenant (the registry is small: tens to hundreds). */
  findAll(tenantId: string): Promise<Tool[]>;
  save(tool: Tool): Promise<void>;
}

export interface PolicyRepository {
  /** The tenant's current policy (version 0 with built-in defaults when none was ever set). */
  current(tenantId: string, opts?: { lock?: boolean }): Promise<TenantPolicy>;
  save(policy: TenantPolicy): Promise<void>;
}

export interface GrantListFilter extends ListFilter {
  toolName?: string;
  scope?: 'conversation' | 'agent' | 'tenant';
  status: 'active' | 'revoked' | 'expired' | 'spent' | 'all';
  /** Standing denies (`deny`) or grants (`allow`); absent: both. */
  effect?: 'allow' | 'deny';
  /** The instant `active` and `expired` are judged at (the app Clock, as for tool calls). */
  now: Date;
}

export interface GrantRepository {
  /** The grants of these tools that apply at `now`: neither revoked nor expired. What the policy may weigh. */
  forTools(tenantId: string, toolNames: string[], now: Date): Promise<Grant[]>;
  /** With `lock`, the row is locked until the unit of work ends (a revocation is decided once). */
  findById(tenantId: string, id: string, opts?: { lock?: boolean }): Promise<Grant | null>;
  /** Newest first; `nextCursor` is opaque. */
  list(tenantId: string, filter: GrantListFilter): Promise<{ grants: Grant[]; nextCursor: string | null }>;
  /** Inserts a new grant, or writes its revocation. */
  save(grant: Grant): Promise<void>;
  /**
   * Counts `n` uses off a limited grant (`uses`), atomically across instances, in the unit's transaction (outside
   * one it throws a retryable error, so the unit runs again in one). The uses left, or null when fewer than `n` were.
   */
  use(tenantId: string, id: string, n: number): Promise<number | null>;
}

/** Everything the ApprovalPolicy weighs for one step's calls besides the conversation itself. */
export interface PolicyInputs {
  halt: HaltInForce | null;
  policy: TenantPolicy;
  tools: Tool[];
  grants: Grant[];
}

/**
 * Reads a proposal's PolicyInputs together: on the auto-approve hot path that is one round trip instead
 * of four. `RepositoryPolicyInputs` (application) composes the repositories; the SQL adapter reads them at once.
 */
export interface PolicyInputsReader {
  forProposal(
    tenantId: string,
    scope: { agentId: string; conversationId: string; toolNames: string[] },
  ): Promise<PolicyInputs>;
  /**
   * The conversation (as `ConversationRepository.findById` loads it with `opts`) and the inputs of a proposal of
   * `toolNames` in it; null when there is no such conversation. Adapters may read both at once.
   */
  withConversation(
    tenantId: string,
    conversationId: string,
    opts: LoadOptions,
    toolNames: string[],
  ): Promise<{ conversation: Conversation; inputs: PolicyInputs } | null>;
}

export interface WebhookRepository {
  find(tenantId: string, id: string): Promise<Webhook | null>;
  /** Inserts a new webhook with its signing secret, or deletes a deleted one (its deliveries go with it); appends its events. */
  save(webhook: Webhook, secret?: string): Promise<void>;
}

export interface HaltRepository {
  /** The halt covering this conversation (tenant, its agent or itself), if any. */
  covering(tenantId: string, agentId: string, conversationId: string): Promise<HaltInForce | null>;
  find(tenantId: string, target: HaltTarget, opts?: LoadOptions): Promise<Halt | null>;
  list(tenantId: string): Promise<Halt[]>;
  /** Inserts a new halt, or removes a resumed one; appends its events. */
  save(halt: Halt): Promise<void>;
}

export interface Clock {
  now(): Date;
}

export interface IdGenerator {
  /** A new unique id with a readable prefix, e.g. `tc_…`. */
  next(prefix: string): string;
}

export interface UnitOfWorkOptions {
  /**
   * For commands that change one conversation and nothing else (propose, claim, report a result, decide
   * without a grant): no transaction and no row lock. The reads see one snapshot; the save is one atomic
   * statement that checks the conversation's version, writes its rows and appends its events. A concurrent
   * change makes it fail and the command run again from a fresh read, as a lost lock race does.
   * Three round trips instead of seven on the hot path, and no client round trip while the chain head is locked.
   */
  optimistic?: boolean;
  /**
   * Units with the same key run one at a time on this instance, in arrival order (the propose command uses
   * its conversation). They then meet each other's commits instead of racing them; across instances the
   * version check still decides.
   */
  exclusive?: string;
}

export interface UnitOfWork {
  /**
   * Runs `work` in one database transaction: aggregates saved inside it commit with their
   * events, or not at all. Events are handed to in-process subscribers only after commit.
   */
  run<T>(work: () => Promise<T>, opts?: UnitOfWorkOptions): Promise<T>;
}

export interface ReceiptClaims {
  tcid: string;
  conv: string;
  tool: string;
  args: string;
  approvedBy: string;
  /** The tenant the call belongs to: one key signs every tenant's receipts, so a backend must know whose they are. */
  tenant: string;
  /**
   * One entry per approval made with a passkey (`stepUp: passkey`): who, with which passkey of which
   * authenticator model, user verified. Absent when no approval was. The whole assertion is in the audit trail.
   */
  stepUp?: ReceiptStepUp[];
  /**
   * The digest of the preview people were shown (SHA-256, base64url, of its RFC 8785 form), when the proposal
   * carried one: a backend passes the preview it is about to carry out to verifyReceipt, which compares them.
   */
  preview?: string;
}

export interface ReceiptStepUp {
  by: string;
  method: 'passkey';
  credentialId: string;
  aaguid: string;
  uv: true;
}

/** How long a receipt is good for (its `exp` after `iat`): 15 minutes (docs/API.md, Receipts). */
export const RECEIPT_LIFETIME_SECONDS = 15 * 60;

/**
 * A receipt that must be a known one (a keyed claim answered again): its id, and when it was first issued, so
 * the receipt answered again is the same receipt, expiring when the first did.
 */
export interface ReceiptIdentity {
  jti: string;
  issuedAt: Date;
}

export interface ReceiptSigner {
  /** A fresh receipt, or (with `identity`) the one issued before, with the same `jti`, `iat` and `exp`. */
  sign(claims: ReceiptClaims, identity?: ReceiptIdentity): Promise<string>;
  jwks(): Promise<{ keys: Record<string, unknown>[] }>;
  /** Signs any payload with the receipt keys (audit checkpoints). */
  signPayload(payload: Record<string, unknown>, typ: string): Promise<string>;
  /** SHA-256 hex of the RFC 8785 canonical form. */
  digest(value: unknown): string;
}

/** Open before reading the call, so a decision committed between the read and the wait is not missed. */
export interface Watch {
  /** Resolves when the call may have changed since the watch opened (or the last `next`), after `timeoutMs`, at shutdown, or when `signal` aborts. */
  next(timeoutMs: number, signal?: AbortSignal): Promise<void>;
  close(): void;
}

export interface ToolCallWaiters {
  watch(tenantId: string, toolCallId: string): Watch;
  wake(tenantId: string, toolCallId: string): void;
  /** True once the server is shutting down: long-polls answer at once. */
  readonly closing: boolean;
}

export interface ListFilter {
  cursor?: string;
  limit: number;
}

/** Reads that bypass the aggregates and go straight to response shapes (CQRS query side). */
export interface ReadModel {
  listConversations(
    principal: Principal,
    filter: ListFilter & { status?: 'active' | 'blocked' | 'halted' },
  ): Promise<Page<ConversationView>>;
  /**
   * The calls the principal may decide; `delegators`: the people whose delegation to them holds now, whose calls
   * they may decide on their behalf, listed too.
   */
  listApprovals(
    principal: Principal,
    filter: ListFilter & { status: string },
    delegators?: readonly Principal[],
  ): Promise<Page<ApprovalView>>;
  listTools(tenantId: string, filter: ListFilter): Promise<Page<ReturnType<typeof toolView>>>;
}

export type { StoredEvent };
