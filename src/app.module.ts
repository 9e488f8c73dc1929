import { DynamicModule, Module } from '@nestjs/common';
import { INPUT_SCHEMAS } from './application/ports/input-schema.port';
import { AjvInputSchemas } from './infrastructure/schemas/input-schemas';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { TerminusModule } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { AuthGuard } from './adapters/http/auth';
import { AuthFailureLimiter } from './adapters/api/auth-failures';
import { AuditController } from './adapters/http/controllers/audit.controller';
import { ApprovalsController } from './adapters/http/controllers/approvals.controller';
import { ConversationsController } from './adapters/http/controllers/conversations.controller';
import { HaltController } from './adapters/http/controllers/halt.controller';
import { HealthController } from './adapters/http/controllers/health.controller';
import { PolicyController } from './adapters/http/controllers/policy.controller';
import { ToolCallsController } from './adapters/http/controllers/tool-calls.controller';
import { ToolsController } from './adapters/http/controllers/tools.controller';
import { GrantsController } from './adapters/http/controllers/grants.controller';
import { RevokeGrantHandler } from './application/commands/revoke-grant/revoke-grant.handler';
import { ListGrantsHandler } from './application/queries/list-grants/list-grants.handler';
import { WellKnownController } from './adapters/http/controllers/well-known.controller';
import { MeController } from './adapters/http/controllers/me.controller';
import { ProblemFilter } from './adapters/http/problem.filter';
import { throttlerOptions, TokenThrottlerGuard } from './adapters/http/rate-limit';
import { GrpcServer } from './adapters/grpc/grpc-server';
import { TollgateRpcs } from './adapters/grpc/tollgate.rpcs';
import { ThrottlerModule } from '@nestjs/throttler';
import {
  AuditVerifyMetricsHandler,
  DecisionMetricsHandler,
  MetricsController,
  TollgateMetrics,
} from './adapters/metrics/metrics';
import { WebModule } from './adapters/web/web.module';
import { CHANNEL_CONSUMERS, channelControllers, channelProviders } from './adapters/channels';
import { ClaimExecutionHandler } from './application/commands/claim-execution/claim-execution.handler';
import { DecideToolCallHandler } from './application/commands/decide-tool-call/decide-tool-call.handler';
import { DecideStepHandler } from './application/commands/decide-step/decide-step.handler';
import { ExtendDeadlineHandler } from './application/commands/extend-deadline/extend-deadline.handler';
import { HaltHandler, ResumeHandler } from './application/commands/halt/halt.handler';
import { ExpireToolCallsHandler } from './application/commands/expire-tool-calls/expire-tool-calls.handler';
import { ProposeToolCallsHandler } from './application/commands/propose-tool-calls/propose-tool-calls.handler';
import { PutPolicyHandler } from './application/commands/put-policy/put-policy.handler';
import { RollBackPolicyHandler } from './application/commands/roll-back-policy/roll-back-policy.handler';
import {
  GetPolicyVersionHandler,
  ListPolicyVersionsHandler,
} from './application/queries/policy-versions/policy-versions.handlers';
import { SimulatePolicyHandler } from './application/queries/simulate-policy/simulate-policy.handler';
import { POLICY_HISTORY, RECORDED_CALLS } from './application/ports/policy-history.port';
import { SqlRecordedToolCalls } from './infrastructure/persistence/sql-recorded-tool-calls';
import { RegisterToolHandler } from './application/commands/register-tool/register-tool.handler';
import { ReportResultHandler } from './application/commands/report-result/report-result.handler';
import { CallQueues } from './application/commands/call-queues';
import { StartConversationHandler } from './application/commands/start-conversation/start-conversation.handler';
import { WakeWaitersHandler } from './application/events/wake-waiters.handler';
import {
  CLOCK,
  CONVERSATIONS,
  GRANTS,
  HALTS,
  IDS,
  POLICIES,
  POLICY_INPUTS,
  READ_MODEL,
  RECEIPTS,
  TOOLS,
  UNIT_OF_WORK,
  WAITERS,
  WEBHOOKS,
} from './application/ports';
import { CHECKPOINT_SIGNATURES } from './application/ports/checkpoint-signatures.port';
import { AUDIT_LOG, AUDIT_RETENTION } from './application/ports/audit-log.port';
import { PurgeAuditTrailHandler } from './application/commands/purge-audit-trail/purge-audit-trail.handler';
import { ConversationAccessHandler, ToolCallAccessHandler } from './application/queries/access/access.handler';
import { GetConversationHandler } from './application/queries/get-conversation/get-conversation.handler';
import {
  AuditCheckpointHandler,
  AuditGapsHandler,
  AuditMetricsHandler,
  AuditReviewersHandler,
  ExportAuditEventsHandler,
  ListAuditEventsHandler,
  VerifyAuditTrailHandler,
} from './application/queries/audit/audit.handlers';
import { GetStatusHandler } from './application/queries/get-status/get-status.handler';
import { GetPolicyHandler } from './application/queries/get-policy/get-policy.handler';
import { AnalysePolicyHandler } from './application/queries/get-policy/analyse-policy.query';
import { GetToolCallHandler } from './application/queries/get-tool-call/get-tool-call.handler';
import { GetToolHandler } from './application/queries/get-tool/get-tool.handler';
import {
  ListApprovalsHandler,
  ListConversationsHandler,
  ListToolsHandler,
} from './application/queries/list/list.handlers';
import { JwtVerifier } from './infrastructure/auth/jwt-verifier';
import { JwtUserTokens } from './infrastructure/auth/user-tokens';
import { USER_TOKENS } from './application/ports/user-token.port';
import { TOLLGATE_CONFIG, TollgateConfig } from './infrastructure/config/config';
import { EventStore } from './infrastructure/persistence/event-store';
import { SqlConversationRepository } from './infrastructure/persistence/sql-conversation.repository';
import { TypeOrmGrantRepository } from './infrastructure/persistence/typeorm-grant.repository';
import { TypeOrmHaltRepository } from './infrastructure/persistence/typeorm-halt.repository';
import { SqlPolicyInputs } from './infrastructure/persistence/sql-policy-inputs';
import { SqlCallUsage } from './infrastructure/persistence/sql-call-usage';
import { CALL_USAGE } from './application/ports/call-usage.port';
import { SqlWebhookRepository } from './infrastructure/persistence/sql-webhook.repository';
import { CreateWebhookHandler, DeleteWebhookHandler } from './application/commands/webhooks/webhook.commands';
import { TypeOrmPolicyRepository } from './infrastructure/persistence/typeorm-policy.repository';
import { SqlAuditLog } from './infrastructure/persistence/sql-audit-log';
import { anchoringProviders } from './adapters/audit-anchoring/anchoring.providers';
import { CallViewsInterceptor } from './adapters/http/call-views.interceptor';
import { CALL_VIEWS } from './application/ports/call-views.port';
import { SqlCallViews } from './infrastructure/persistence/sql-call-views';
import { SqlAuditRetention } from './infrastructure/persistence/sql-audit-retention';
import { TypeOrmReadModel } from './infrastructure/persistence/typeorm-read-model';
import { TypeOrmToolRepository } from './infrastructure/persistence/typeorm-tool.repository';
import { TypeOrmUnitOfWork } from './infrastructure/persistence/unit-of-work';
import { JoseReceiptSigner } from './infrastructure/receipts/receipt-signer';
import { DataKeyVault } from './infrastructure/secrets/data-key';
import { ARGUMENT_VAULT } from './application/ports/argument-vault.port';
import { SecretArguments } from './application/redaction/secret-arguments';
import { ExpirySweeper } from './infrastructure/scheduling/expiry-sweeper';
import { EventPartitionMaintenance } from './infrastructure/persistence/event-partitions';
import { KickOutboxOnCommit, OUTBOX_OBSERVER, OutboxRelay } from './infrastructure/outbox/outbox-relay';
import { EventFeed, KickEventFeedOnCommit } from './infrastructure/streaming/event-feed';
import { EventStreamController } from './adapters/http/controllers/event-stream.controller';
import { OUTBOX_CONSUMERS, OutboxConsumer } from './application/ports/outbox.port';
import { RandomIds, SystemClock } from './infrastructure/system';
import { InProcessWaiters } from './infrastructure/waiting/in-process-waiters';
import { PgWakeListener } from './infrastructure/waiting/pg-wake-listener';
import { WaiterRecheck } from './infrastructure/waiting/waiter-recheck';
import { QUESTION_CONTROLLERS, QUESTION_PROVIDERS } from './questions.composition';
import { GOVERNANCE_CONTROLLERS, GOVERNANCE_PROVIDERS } from './governance.composition';
import { TokenRateLimit, WaitSlots } from './adapters/api/limits';
import { PERSONS } from './application/ports/person.port';
import { SqlPersons } from './infrastructure/persistence/sql-persons';
import { PersonSightings } from './application/persons/person-sightings';
import { ChannelPeople } from './application/persons/channel-people';
import { RefuseUnlinkedDecisionHandler } from './application/persons/refuse-unlinked-decision';
import { PersonSightingsInterceptor } from './adapters/http/persons.interceptor';
import { SlackPeople } from './adapters/slack/slack-people';
import { PasskeysController, PersonPasskeysController } from './adapters/http/controllers/passkeys.controller';
import {
  ListPasskeysHandler,
  PasskeyAssertionOptionsHandler,
  PasskeyRegistrationOptionsHandler,
  RegisterPasskeyHandler,
  RemovePasskeyHandler,
  ListPersonPasskeysHandler,
  RevokePersonPasskeyHandler,
} from './application/commands/passkeys/passkey.commands';
import { RequestStepUpHandler } from './application/commands/request-step-up/request-step-up.handler';
import { PASSKEYS } from './application/ports/passkey.port';
import { WebAuthnPasskeys } from './infrastructure/auth/passkeys';
import { DelegationsController, MyDelegationController } from './adapters/http/controllers/delegation.controller';
import {
  EndDelegationHandler,
  GetDelegationHandler,
  ListDelegationsHandler,
  SetDelegationHandler,
} from './application/commands/delegation/delegation.commands';
import { DELEGATIONS, PERSON_MAX_AGE_SECONDS } from './application/ports/delegation.port';
import { DelegatedAuthority } from './application/persons/delegated-authority';
import { SqlDelegations } from './infrastructure/persistence/sql-delegations';

const COMMAND_HANDLERS = [
  StartConversationHandler,
  RegisterToolHandler,
  PutPolicyHandler,
  ProposeToolCallsHandler,
  DecideToolCallHandler,
  DecideStepHandler,
  ExtendDeadlineHandler,
  ClaimExecutionHandler,
  ReportResultHandler,
  ExpireToolCallsHandler,
  HaltHandler,
  ResumeHandler,
  PurgeAuditTrailHandler,
  CreateWebhookHandler,
  DeleteWebhookHandler,
  RevokeGrantHandler,
  RollBackPolicyHandler,
  RefuseUnlinkedDecisionHandler,
  RequestStepUpHandler,
  PasskeyRegistrationOptionsHandler,
  PasskeyAssertionOptionsHandler,
  RegisterPasskeyHandler,
  RemovePasskeyHandler,
  RevokePersonPasskeyHandler,
  SetDelegationHandler,
  EndDelegationHandler,
];
const QUERY_HANDLERS = [
  GetConversationHandler,
  GetToolCallHandler,
  GetToolHandler,
  GetPolicyHandler,
  AnalysePolicyHandler,
  ListConversationsHandler,
  ListApprovalsHandler,
  ListToolsHandler,
  ListGrantsHandler,
  ConversationAccessHandler,
  ToolCallAccessHandler,
  GetStatusHandler,
  ListAuditEventsHandler,
  ExportAuditEventsHandler,
  VerifyAuditTrailHandler,
  AuditCheckpointHandler,
  AuditMetricsHandler,
  AuditGapsHandler,
  ListPolicyVersionsHandler,
  GetPolicyVersionHandler,
  SimulatePolicyHandler,
  ListPasskeysHandler,
  ListPersonPasskeysHandler,
  GetDelegationHandler,
  ListDelegationsHandler,
];

/** The composition root: binds the application's ports to their infrastructure and mounts the adapters. */
@Module({})
export class AppModule {
  /**
   * `extra.outboxConsumers`: more ways out (tests use it to watch deliveries). The request id, access log and
   * HTTP metrics are Fastify hooks the server adds (server.ts configureHttp).
   */
  static forRoot(
    config: TollgateConfig,
    dataSource: DataSource,
    extra: { outboxConsumers?: OutboxConsumer[] } = {},
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CqrsModule.forRoot(),
        TerminusModule.forRoot({ logger: false }),
        ThrottlerModule.forRoot(throttlerOptions(config)),
        WebModule.forRoot(config),
      ],
      controllers: [
        ToolsController,
        PolicyController,
        ConversationsController,
        ToolCallsController,
        ApprovalsController,
        GrantsController,
        WellKnownController,
        HealthController,
        HaltController,
        MetricsController,
        AuditController,
        EventStreamController,
        MeController,
        PasskeysController,
        PersonPasskeysController,
        MyDelegationController,
        DelegationsController,
        ...QUESTION_CONTROLLERS,
        ...GOVERNANCE_CONTROLLERS,
        ...channelControllers(config),
      ],
      providers: [
        { provide: TOLLGATE_CONFIG, useValue: config },
        { provide: DataSource, useValue: dataSource },
        { provide: JwtVerifier, useFactory: () => new JwtVerifier(config.auth) },
        {
          provide: USER_TOKENS,
          useFactory: (v: JwtVerifier) => new JwtUserTokens(config.auth, v, config.oidc),
          inject: [JwtVerifier],
        },
        { provide: AuthFailureLimiter, useFactory: () => new AuthFailureLimiter(config.authFailuresPer10s) },
        EventStore,
        CallQueues,
        TypeOrmUnitOfWork,
        { provide: UNIT_OF_WORK, useExisting: TypeOrmUnitOfWork },
        { provide: CONVERSATIONS, useClass: SqlConversationRepository },
        { provide: TOOLS, useClass: TypeOrmToolRepository },
        TypeOrmPolicyRepository,
        { provide: POLICIES, useExisting: TypeOrmPolicyRepository },
        { provide: POLICY_HISTORY, useExisting: TypeOrmPolicyRepository },
        { provide: RECORDED_CALLS, useClass: SqlRecordedToolCalls },
        { provide: POLICY_INPUTS, useClass: SqlPolicyInputs },
        { provide: CALL_USAGE, useClass: SqlCallUsage },
        { provide: WEBHOOKS, useClass: SqlWebhookRepository },
        { provide: GRANTS, useClass: TypeOrmGrantRepository },
        { provide: HALTS, useClass: TypeOrmHaltRepository },
        { provide: READ_MODEL, useClass: TypeOrmReadModel },
        { provide: AUDIT_LOG, useClass: SqlAuditLog },
        { provide: AUDIT_RETENTION, useClass: SqlAuditRetention },
        { provide: RECEIPTS, useClass: JoseReceiptSigner },
        // Secret arguments: masked and sealed with the data key (kept outside the database).
        { provide: ARGUMENT_VAULT, useClass: DataKeyVault },
        SecretArguments,
        { provide: INPUT_SCHEMAS, useClass: AjvInputSchemas },
        { provide: PASSKEYS, useClass: WebAuthnPasskeys },
        { provide: CHECKPOINT_SIGNATURES, useExisting: RECEIPTS },
        { provide: CLOCK, useClass: SystemClock },
        { provide: IDS, useClass: RandomIds },
        InProcessWaiters,
        PgWakeListener,
        WaiterRecheck,
        { provide: WAITERS, useExisting: InProcessWaiters },
        ExpirySweeper,
        EventPartitionMaintenance,
        OutboxRelay,
        EventFeed,
        KickEventFeedOnCommit,
        KickOutboxOnCommit,
        ...channelProviders(config),
        {
          provide: OUTBOX_CONSUMERS,
          useFactory: (channels: OutboxConsumer[]) => [...channels, ...(extra.outboxConsumers ?? [])],
          inject: [CHANNEL_CONSUMERS],
        },
        WakeWaitersHandler,
        ...QUESTION_PROVIDERS,
        ...GOVERNANCE_PROVIDERS,
        TollgateMetrics,
        { provide: OUTBOX_OBSERVER, useExisting: TollgateMetrics },
        DecisionMetricsHandler,
        AuditVerifyMetricsHandler,
        ...COMMAND_HANDLERS,
        ...QUERY_HANDLERS,
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_GUARD, useClass: TokenThrottlerGuard },
        // After the guards: the person behind each authenticated request is kept on record (persons).
        { provide: APP_INTERCEPTOR, useClass: PersonSightingsInterceptor },
        { provide: PERSONS, useClass: SqlPersons },
        // Delegation (out of office): whose rights a person may decide with besides their own.
        { provide: DELEGATIONS, useClass: SqlDelegations },
        { provide: PERSON_MAX_AGE_SECONDS, useValue: config.personMaxAgeSeconds },
        DelegatedAuthority,
        PersonSightings,
        ChannelPeople,
        ...(config.slack ? [SlackPeople] : []),
        { provide: WaitSlots, useFactory: () => new WaitSlots(config.maxWaitsPerToken, config.maxWaitsPerTenant) },
        TokenRateLimit,
        TollgateRpcs,
        GrpcServer,
        { provide: APP_FILTER, useClass: ProblemFilter },
        // Issue 28 parts 8 and 9: audit checkpoints written outside the database; when cards were shown.
        ...anchoringProviders(config),
        { provide: CALL_VIEWS, useClass: SqlCallViews },
        { provide: APP_INTERCEPTOR, useClass: CallViewsInterceptor },
        AuditReviewersHandler,
      ],
    };
  }
}
