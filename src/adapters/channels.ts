import type { Provider, Type } from '@nestjs/common';
import { approvalChannelBridges } from '../application/channels/approval-channel-bridge';
import { CLOCK, CONVERSATIONS } from '../application/ports';
import { APPROVAL_CALLBACKS } from '../application/ports/approval-callback.port';
import type { OutboxConsumer } from '../application/ports/outbox.port';
import type { TollgateConfig } from '../infrastructure/config/config';
import { Deciders } from '../application/persons/deciders';
import { ACTION_TOKENS } from '../application/ports/action-token.port';
import { ActionDesk } from './actions/action-desk';
import { ActionLinks } from './actions/action-links';
import { SignedActionTokens } from './actions/action-tokens';
import { ActionsController } from './actions/actions.controller';
import { ActionUses } from './actions/action-uses';
import { PublicAddress } from './actions/public-address';
import { EmailApprovalCallback } from './email/email-approval-callback';
import { MAILER, smtpMailer } from './email/mailer';
import { WebhooksController } from './http/controllers/webhooks.controller';
import { pushCallbacks, pushControllers, pushDigestSenders, pushProviders } from './push/push.parts';
import { DIGEST_SENDERS, DigestRunner, DigestSender } from './reach/digests';
import { NotificationPreferencesController } from './reach/notification-preferences.controller';
import { ReachPlanner } from './reach/reach-planner';
import { ReachStore } from './reach/reach.store';
import { SentNotifications } from './reach/sent-notifications';
import { SlackApprovalCallback } from './slack/slack-approval-callback';
import { SlackDirectMessages } from './slack/slack-direct';
import { SLACK_CLIENT, slackWebClient } from './slack/slack-client';
import { SlackInteractions } from './slack/slack-interactions';
import { SlackInteractionsController } from './slack/slack-interactions.controller';
import { SlackMessageStore } from './slack/slack-messages.store';
import { SlackQuestions } from './slack/slack-questions';
import { WebhookDispatcher, WebhookFanOut } from './webhooks/webhook-dispatcher';
import { WebhookStore } from './webhooks/webhook.store';

/** The outbox consumers of the channels: one bridge per ApprovalCallback, and the webhook fan-out. */
export const CHANNEL_CONSUMERS = Symbol('ChannelConsumers');

/**
 * Composition of the ways Tollgate reaches people and systems after a change (part of the composition
 * root, AppModule): each ApprovalCallback (Slack and email when configured, Web Push) is driven by its own outbox bridge;
 * webhooks take every event they subscribe to.
 */
export function channelControllers(config: TollgateConfig): Type[] {
  return [
    WebhooksController,
    ActionsController,
    NotificationPreferencesController,
    ...(config.slack ? [SlackInteractionsController] : []),
    ...pushControllers(config),
  ];
}

export function channelProviders(config: TollgateConfig): Provider[] {
  const slack = config.slack;
  const email = config.email;
  const callbacks: Type[] = [
    ...(slack ? [SlackApprovalCallback] : []),
    ...(email ? [EmailApprovalCallback] : []),
    ...pushCallbacks(config),
  ];
  return [
    // Single-use actions (push notifications, email links) and whom requests reach.
    { provide: ACTION_TOKENS, useClass: SignedActionTokens },
    SignedActionTokens,
    PublicAddress,
    ActionLinks,
    ActionUses,
    ActionDesk,
    Deciders,
    // People's notification settings, and digests of what waits for them.
    ReachStore,
    ReachPlanner,
    SentNotifications,
    DigestRunner,
    {
      provide: DIGEST_SENDERS,
      useFactory: (...senders: DigestSender[]) => senders,
      inject: [
        ...(email ? [EmailApprovalCallback] : []),
        ...(slack ? [SlackDirectMessages] : []),
        ...pushDigestSenders(config),
      ],
    },
    ...(email ? [{ provide: MAILER, useFactory: () => smtpMailer(email) }, EmailApprovalCallback] : []),
    ...pushProviders(config),
    ...(slack
      ? [
          { provide: SLACK_CLIENT, useFactory: () => slackWebClient(slack) },
          SlackMessageStore,
          SlackApprovalCallback,
          SlackDirectMessages,
          SlackQuestions,
          SlackInteractions,
        ]
      : []),
    WebhookStore,
    WebhookDispatcher,
    WebhookFanOut,
    { provide: APPROVAL_CALLBACKS, useFactory: (...registered: unknown[]) => registered, inject: callbacks },
    {
      provide: CHANNEL_CONSUMERS,
      useFactory: (
        registered,
        conversations,
        clock,
        webhooks: OutboxConsumer,
        ...questions: OutboxConsumer[]
      ): OutboxConsumer[] => [...approvalChannelBridges(registered, conversations, clock), webhooks, ...questions],
      inject: [APPROVAL_CALLBACKS, CONVERSATIONS, CLOCK, WebhookFanOut, ...(slack ? [SlackQuestions] : [])],
    },
  ];
}
