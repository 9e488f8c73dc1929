import type { AuthenticationResponseJSON } from '@simplewebauthn/browser';

/**
 * The API's shapes are the SDK's (packages/sdk/src/types.ts, checked against the OpenAPI document); the names
 * the inbox reads them by are kept here, with the two shapes that are the page's own.
 */
export type {
  ActorRef,
  Approval,
  AuditEvent,
  Channel,
  Conversation,
  ConversationUser,
  Display,
  DisplayField,
  Grant,
  Halt as HaltInForce,
  Page,
  Preview,
  Problem,
  Status as TenantStatus,
  SupervisionLevel as Level,
  Tool,
  ToolCall,
  ToolCallDecision as Decision,
  ToolCallStatus as Status,
  ApprovalConversation as ConversationRef,
} from '@tollgate/sdk';

/** GET /ui/config: what the sign-in page may offer. */
export interface UiConfig {
  devSignIn: boolean;
  /** Single sign-on: "Sign in with <provider>" (GET /auth/login); null without it. */
  sso?: { provider: string } | null;
}

/** A passkey's assertion for an approval whose rule asks for one (the browser's JSON, sent as it is). */
export interface StepUpEvidence {
  passkey: AuthenticationResponseJSON;
}

/** What the page sends as a decision. */
export type DecisionBody =
  | { decision: 'approve'; reason?: string; arguments?: Record<string, unknown>; stepUp?: StepUpEvidence }
  | {
      decision: 'always_allow';
      reason?: string;
      scope: 'conversation' | 'agent' | 'tenant';
      expiresIn?: number;
      stepUp?: StepUpEvidence;
    }
  | { decision: 'reject'; reason: string }
  /** The tool does not run; the agent is given `response` as its answer (when the call's rule allows `respond`). */
  | { decision: 'respond'; response: string };

/*
 * The person's own settings. The SDK's generated types have these shapes (components.schemas.NotificationPreferences,
 * Delegation, SetDelegationRequest) but do not export them by name yet; these copies are checked against them by
 * test/web/settings.spec.ts, so a change to the API fails the typecheck until they follow.
 */

/** How often a channel reaches the person: a message per held call, a digest of what waits, or nothing. */
export type Cadence = 'immediate' | 'hourly' | 'daily' | 'off';

/** GET/PUT /v1/me/notifications: how Tollgate reaches the person (a PUT takes any of the fields). */
export interface NotificationSettings {
  email: Cadence;
  push: Cadence;
  /** Direct messages from the Slack app to the person's linked Slack user. */
  slack: Cadence;
  /** When the daily digest goes out, `HH:MM` in `timeZone`. */
  dailyAt: string;
  /** An IANA time zone. */
  timeZone: string;
  /** Nothing is sent from `from` to `to` (`HH:MM`, may wrap past midnight); null or absent: no quiet hours. */
  quietHours?: { from: string; to: string } | null;
}

/** GET/PUT /v1/me/delegation: who decides for the person while they are away. */
export interface Delegation {
  /** The delegate. */
  to: { id: string; name?: string };
  from: string;
  until: string;
  reason?: string;
  /** It holds now (false: it is still to come). */
  active: boolean;
}

/** PUT /v1/me/delegation: `to` a person's id or email; `from` now when left out; `until` at most 90 days after it. */
export interface DelegationRequest {
  to: string;
  from?: string;
  until: string;
  reason?: string;
}
