import { allPages, Tollgate, TollgateError, type AuditEvent, type FetchLike, type Problem } from '@tollgate/sdk';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationOptions,
  RegistrationResponseJSON,
  StepUpOptions,
} from './passkeys';
import type { PushDevice } from './push';
import type { DecisionBody, Delegation, DelegationRequest, NotificationSettings, UiConfig } from './types';

/** A refused request, carrying the API's RFC 9457 problem (the SDK's error). */
export { TollgateError as ApiError };

/** What to show a person of a failed request: the server's words, or why it could not be reached. */
export function errorText(e: unknown): string {
  if (e instanceof TollgateError)
    return e.status === 0 ? ((e.cause as Error | undefined)?.message ?? e.detail) : e.detail;
  return (e as Error).message;
}

/** Routes the page may call before it has a token (same origin). */
const anonymous = new Tollgate({ url: '', retry: { maxAttempts: 1 } });
export const publicApi = {
  config: (): Promise<UiConfig> => anonymous.request<UiConfig>('GET', '/ui/config'),
  devToken: (body: { sub: string; name?: string; roles: string[]; tenant?: string }): Promise<{ token: string }> =>
    anonymous.request<{ token: string }>('POST', '/ui/dev-token', { body }),
};

export type Api = ReturnType<typeof createApi>;

/** A change of the control plane waiting for more admins (GET /v1/changes). */
export interface PendingChange {
  id: string;
  kind: 'policy_update' | 'policy_rollback' | 'resume' | 'webhook_create' | 'tenant_grant';
  summary: string;
  payload: Record<string, unknown>;
  payloadDigest: string;
  proposedBy: { id: string; name?: string };
  approvals: Array<{ by: { id: string; name?: string }; at: string }>;
  needed: number;
  status: 'pending' | 'applied' | 'rejected' | 'expired';
  createdAt: string;
  expiresAt: string;
}

/**
 * WebAuthn options the server made, as @simplewebauthn/browser types them: the API describes them as JSON objects
 * (the SDK's types), and the server makes them with @simplewebauthn/server, whose types these are.
 */
function browserOptions<T>(options: object): T {
  return options as T;
}

/**
 * The /v1 API as the signed-in person, through the SDK (same origin). Every request carries the bearer token, or,
 * signed in with single sign-on, the session cookie (same-origin requests send it by themselves) and the session's
 * CSRF token; decisions say they came through the web inbox (`X-Tollgate-Channel: web`). A 401 signs the page out.
 * No retries: the page shows a failure at once, and the live stream reconnects on its own.
 */
export function createApi(
  credentials: { token: string; csrfToken?: string },
  onUnauthenticated: (p: Problem) => void,
  onServerTime: (skewMs: number) => void = () => undefined,
) {
  const timedFetch: FetchLike = async (input, init) => {
    const sent = Date.now();
    const res = await fetch(input, init);
    const date = res.headers.get('date');
    if (date) onServerTime(Date.parse(date) + 500 - (sent + Date.now()) / 2); // the Date header has whole seconds
    return res;
  };
  const tollgate = new Tollgate({
    url: '',
    ...(credentials.token ? { token: credentials.token } : {}),
    ...(credentials.csrfToken !== undefined ? { headers: { 'X-CSRF-Token': credentials.csrfToken } } : {}),
    channel: 'web',
    fetch: (input, init) => timedFetch(input, { ...init, credentials: 'same-origin' }),
    retry: { maxAttempts: 1 },
  });

  async function call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      if (e instanceof TollgateError && e.status === 401) onUnauthenticated(e.problem);
      throw e;
    }
  }

  return {
    /** The client itself, for the live stream. */
    tollgate,
    /** What the caller may decide, oldest first. */
    pendingApprovals: () => call(() => tollgate.inbox().all()),
    tools: () => call(() => allPages((cursor) => tollgate.listTools({ limit: 1000, cursor }))),
    toolCall: (callId: string) => call(() => tollgate.getToolCall(callId)),
    conversation: (convId: string) => call(() => tollgate.getConversation(convId)),
    status: () => call(() => tollgate.getStatus()),
    decide: (callId: string, body: DecisionBody) => call(() => tollgate.inbox().decide(callId, body)),
    /** A challenge for approving this call with these arguments (absent: the call's own) with a passkey. */
    stepUp: (callId: string, body: { arguments?: Record<string, unknown> }) =>
      call(async () => browserOptions<StepUpOptions>(await tollgate.inbox().stepUp(callId, body))),
    /** The signed-in person's passkeys. */
    passkeys: () => call(() => tollgate.passkeys.list()),
    passkeyOptions: () =>
      call(async () => browserOptions<RegistrationOptions>(await tollgate.passkeys.registrationOptions())),
    /** Recorded as PasskeyRegistered with `via: "web"`. */
    addPasskey: (body: { response: RegistrationResponseJSON; name?: string; assertion?: AuthenticationResponseJSON }) =>
      call(() => tollgate.passkeys.register(body)),
    /** A challenge for removing a passkey: one of the person's passkeys must sign it. */
    passkeyAssertionOptions: () =>
      call(async () =>
        browserOptions<{ publicKey: PublicKeyCredentialRequestOptionsJSON }>(
          await tollgate.passkeys.assertionOptions(),
        ),
      ),
    /** Recorded as PasskeyRemoved with `via: "web"`. */
    removePasskey: (id: string, assertion: AuthenticationResponseJSON) =>
      call(() => tollgate.passkeys.remove(id, assertion)),
    /** The server's VAPID key, for subscribing this browser to push (503 push_unavailable when push is off). */
    vapidPublicKey: () => call(() => tollgate.request<{ publicKey: string }>('GET', '/v1/push/vapid-public-key')),
    /** The person's browsers subscribed to push notifications. */
    pushSubscriptions: () =>
      call(
        async () =>
          (await tollgate.request<{ subscriptions: PushDevice[] }>('GET', '/v1/me/push-subscriptions')).subscriptions,
      ),
    /** Keeps this browser's PushSubscription (its toJSON()) for the person. */
    addPushSubscription: (body: object) =>
      call(() => tollgate.request<PushDevice>('POST', '/v1/me/push-subscriptions', { body, idempotent: false })),
    removePushSubscription: (id: string) =>
      call(() =>
        tollgate.request<void>('DELETE', `/v1/me/push-subscriptions/${encodeURIComponent(id)}`, { idempotent: false }),
      ),
    /** How Tollgate reaches the person (the defaults until they set any). People only. */
    notificationSettings: () => call(() => tollgate.request<NotificationSettings>('GET', '/v1/me/notifications')),
    /** Sets any of the fields (the others stay); answers them all. A bad field: 400 validation_failed naming it. */
    saveNotificationSettings: (body: Partial<NotificationSettings>) =>
      call(() => tollgate.request<NotificationSettings>('PUT', '/v1/me/notifications', { body })),
    /** The person's delegation that holds now or is to come; null without one (404 no_delegation). */
    delegation: () =>
      call(async () => {
        try {
          return await tollgate.request<Delegation>('GET', '/v1/me/delegation');
        } catch (e) {
          if (e instanceof TollgateError && e.code === 'no_delegation') return null;
          throw e;
        }
      }),
    /** Sets the person's delegation, replacing theirs (recorded with `via: "web"`); the same again changes nothing. */
    setDelegation: (body: DelegationRequest) =>
      call(() => tollgate.request<Delegation>('PUT', '/v1/me/delegation', { body })),
    /** Ends the person's delegation now, or withdraws one yet to start (204 without one too). */
    endDelegation: () => call(() => tollgate.request<void>('DELETE', '/v1/me/delegation', { idempotent: false })),
    /** The tenant's standing grants that apply now, newest first (approvers, admins, auditors). */
    grants: () => call(() => tollgate.grants.all({ status: 'active' })),
    /** Revokes a grant (recorded with `via: "web"`); answers it revoked. */
    revokeGrant: (id: string, reason?: string) => call(() => tollgate.grants.revoke(id, reason)),
    /** The pending questions agents asked that the caller may answer, newest first. */
    questions: () => call(async () => (await tollgate.questions.pending({ limit: 100 })).items),
    /** Answers a question (recorded with `via: "web"`); the first answer wins. */
    answer: (id: string, answer: string) => call(() => tollgate.questions.answer(id, answer)),
    /** Every pending call of a conversation's step at once: approve or reject (each still its own decision). */
    decideStep: (convId: string, decision: 'approve' | 'reject', reason?: string) =>
      call(() => tollgate.inbox().decideStep(convId, { decision, reason })),
    /** Changes of the control plane waiting for another admin (governance), newest first; admins and auditors. */
    pendingChanges: () =>
      call(
        async () =>
          (await tollgate.request<{ items: PendingChange[] }>('GET', '/v1/changes?status=pending&limit=100')).items,
      ),
    /** Another admin's approval (recorded with `via: "web"`); at the quorum the change takes effect. */
    approveChange: (id: string) =>
      call(() =>
        tollgate.request<{ change: PendingChange; applied: boolean }>(
          'POST',
          `/v1/changes/${encodeURIComponent(id)}/approve`,
          { idempotent: false },
        ),
      ),
    /** Ends a pending change (any admin, its proposer too). */
    rejectChange: (id: string, reason?: string) =>
      call(() =>
        tollgate.request<PendingChange>('POST', `/v1/changes/${encodeURIComponent(id)}/reject`, {
          body: reason ? { reason } : {},
          idempotent: false,
        }),
      ),
    /** Auditors and admins only. */
    auditEvents: (convId: string): Promise<AuditEvent[]> =>
      call(async () => {
        const events: AuditEvent[] = [];
        let cursor: string | null = null;
        do {
          const page = await tollgate.listAuditEvents({
            conversationId: convId,
            limit: 1000,
            cursor: cursor ?? undefined,
          });
          events.push(...page.events);
          cursor = page.nextCursor;
        } while (cursor && events.length < 10_000);
        return events;
      }),
  };
}
