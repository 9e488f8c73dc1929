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
  | { decision: 'reject'; reason: string };
