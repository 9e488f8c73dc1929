import { Inject, Optional } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { approvingArguments } from '../../../domain/conversation/rules/step-up';
import { isRejection } from '../../../domain/conversation/rules/allowed-decisions';
import { Grant } from '../../../domain/grant/grant.aggregate';
import { personActor } from '../../../domain/shared/actor';
import { visibleCall } from '../../access';
import {
  CLOCK,
  Clock,
  CONVERSATIONS,
  ConversationRepository,
  GRANTS,
  GrantRepository,
  PENDING,
  TOOLS,
  ToolRepository,
  IDS,
  IdGenerator,
  UNIT_OF_WORK,
  UnitOfWork,
} from '../../ports';
import { PASSKEYS, Passkeys } from '../../ports/passkey.port';
import { DelegatedAuthority } from '../../persons/delegated-authority';
import { toolCallView } from '../../views/views';
import { DecideToolCallCommand } from './decide-tool-call.command';
import { SecretArguments } from '../../redaction/secret-arguments';
import { mustConformToInputSchema } from './edit-conforms';
import { mustHaveShownPreview } from '../../../domain/conversation/preview-shown';
import { INPUT_SCHEMAS, InputSchemas } from '../../ports/input-schema.port';
import { DomainError } from '../../../domain/shared/domain-error';
import { jsonEqual } from '../../../domain/shared/json';
import { GovernanceGate } from '../changes/governance-gate';
import type { HeldForApproval } from '../../views/change.view';

@CommandHandler(DecideToolCallCommand)
export class DecideToolCallHandler implements ICommandHandler<DecideToolCallCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(GRANTS) private readonly grants: GrantRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(IDS) private readonly ids: IdGenerator,
    // Optional so the unit tests' wiring stays short; without it no assertion verifies (fail closed).
    @Optional() @Inject(PASSKEYS) private readonly passkeys?: Passkeys,
    // Optional likewise; without it no one decides on anyone's behalf (fail closed).
    @Optional() private readonly delegated?: DelegatedAuthority,
    // Optional likewise; without them edits are not checked against a tool's input schema.
    @Optional() @Inject(TOOLS) private readonly tools?: ToolRepository,
    @Optional() @Inject(INPUT_SCHEMAS) private readonly schemas?: InputSchemas,
    // Optional likewise; without it no tenant-wide grant waits for a second admin (the unit tests' wiring).
    @Optional() private readonly gate?: GovernanceGate,
    // Optional likewise; without it edits are recorded as given (no call of the unit tests has secret arguments).
    @Optional() private readonly secrets?: SecretArguments,
  ) {}

  async execute({ decider, toolCallId, input: given, grant: options, passkey, shownArguments }: DecideToolCallCommand) {
    // Step-up evidence is what this handler verified, never what a caller put in the command.
    const { stepUp: _ignored, ...input } = given;
    DecideToolCallCommand.mustFit(input, options);
    let held: HeldForApproval | null = null;
    const result = await this.uow.run(
      async () => {
        held = null; // a retried unit starts over
        const loaded = await this.conversations.findByToolCallId(decider.tenant, toolCallId, {
          lock: true,
          calls: { statuses: PENDING, ids: [toolCallId] },
        });
        // Delegations to the decider matter only where their own rights do not make this decision: the people whose
        // delegation holds now, as their records last showed them (any channel: REST, gRPC, Slack, email, push).
        const found = loaded?.findCall(toolCallId);
        const delegators =
          this.delegated && loaded && found && !loaded.decidesByOwnRight(decider, found, input)
            ? await this.delegated.of(decider, this.clock.now())
            : [];
        const conv = visibleCall(loaded, decider, toolCallId, delegators);
        const at = this.clock.now();
        const call = conv.findCall(toolCallId)!;
        // A preview its channel could not show whole is approved on the card only (403 preview_not_shown).
        if (call.status === 'pending')
          mustHaveShownPreview(call.preview, decider.via, isRejection(input.decision), call.id);
        if (
          shownArguments !== undefined &&
          !isRejection(input.decision) &&
          call.status === 'pending' &&
          !jsonEqual(approvingArguments(call, input), shownArguments)
        )
          throw new DomainError(
            'arguments_changed',
            'conflict',
            'The arguments changed since they were shown (another approver edited them): open the card to see what would run now',
          );
        // Secret arguments: an edit is recorded masked, its real values sealed with the call (application/redaction).
        const secret =
          input.arguments && call.status === 'pending'
            ? this.secrets?.edit(decider.tenant, call, input.arguments)
            : undefined;
        const decided = secret ? { ...input, arguments: secret.arguments } : input;
        // An edit must conform to the tool's input schema, when it registered one (400 arguments_invalid): the edit
        // as it would run, its secrets restored (a marker is no value of the schema's type).
        const asRun = secret ? { ...input, arguments: secret.real } : input;
        await mustConformToInputSchema(decider.tenant, call, asRun, this.tools, this.schemas);
        // A passkey is checked (and its challenge used up) only where it counts: an approval of a pending call
        // whose rule asks for one. The domain then decides with the evidence, and records a refusal.
        const stepUp =
          passkey &&
          this.passkeys &&
          call.policy.stepUp === 'passkey' &&
          !isRejection(input.decision) &&
          call.status === 'pending'
            ? await this.passkeys.verifyStepUp(decider, passkey, toolCallId, approvingArguments(call, input), at)
            : undefined;
        // A passkey signed what the person typed; the decision is recorded masked (the same edit, its secrets masked).
        const evidence = stepUp?.outcome === 'verified' && secret ? { ...stepUp, arguments: secret.arguments } : stepUp;
        const outcome = conv.decide(
          toolCallId,
          evidence ? { ...decided, stepUp: evidence } : decided,
          decider,
          at,
          delegators,
        );
        if (secret?.seal) call.reseal(secret.seal);
        // The approval is recorded before the grant it gives rise to; a refused grant request is recorded too.
        await this.conversations.save(conv);
        if (outcome.kind === 'decided' && outcome.grant) {
          // The grant's maker is the person who acted; a delegate's names whose authority made it.
          const forWhom = outcome.grant.onBehalfOf;
          const by = { ...personActor(decider, decider.via), ...(forWhom ? { onBehalfOf: forWhom } : {}) };
          // Four eyes: under `governance`, a tenant-wide grant waits for another admin; the decision stands.
          held =
            outcome.grant.scope === 'tenant' && input.decision === 'always_allow' && this.gate
              ? await this.gate.hold({
                  tenantId: decider.tenant,
                  by,
                  kind: 'tenant_grant',
                  summary: `Always allow ${outcome.grant.toolName}${
                    options.args
                      ? ` (${Object.entries(options.args)
                          .map(([k, v]) => `${k}=${v}`)
                          .join(', ')})`
                      : ''
                  } in the whole tenant${options.expiresIn ? ` for ${options.expiresIn} s` : ''}${
                    options.uses ? `, ${options.uses} use${options.uses === 1 ? '' : 's'}` : ''
                  }`,
                  payload: {
                    toolName: outcome.grant.toolName,
                    scope: 'tenant',
                    conversationId: conv.id,
                    agentId: conv.agentId,
                    toolCallId,
                    ...(options.expiresIn !== undefined ? { expiresIn: options.expiresIn } : {}),
                    ...(options.args !== undefined ? { args: options.args } : {}),
                    ...(options.uses !== undefined ? { uses: options.uses } : {}),
                  },
                })
              : null;
          if (held) return outcome;
          const grant = Grant.create({
            id: this.ids.next('grant'),
            tenantId: decider.tenant,
            toolName: outcome.grant.toolName,
            scope: outcome.grant.scope,
            conversationId: conv.id,
            agentId: conv.agentId,
            by,
            toolCallId,
            at,
            ...options,
          });
          await this.grants.save(grant);
        }
        // An always_reject also writes its standing deny (a grant row with effect deny), as the person who acted.
        if (outcome.kind === 'decided' && outcome.deny) {
          const deny = Grant.create({
            id: this.ids.next('deny'),
            tenantId: decider.tenant,
            toolName: outcome.deny.toolName,
            scope: outcome.deny.scope,
            conversationId: conv.id,
            agentId: conv.agentId,
            by: personActor(decider, decider.via),
            toolCallId,
            at,
            effect: 'deny',
            ...(options.expiresIn !== undefined ? { expiresIn: options.expiresIn } : {}),
            ...(options.args !== undefined ? { args: options.args } : {}),
          });
          await this.grants.save(deny);
        }
        return outcome;
        // An always_allow also writes a grant: that needs a transaction. Any other decision changes one conversation.
      },
      {
        // A passkey's challenge is used up in the same transaction as the decision it served.
        optimistic: input.decision !== 'always_allow' && input.decision !== 'always_reject' && !passkey,
        exclusive: `tool-call\u0000${decider.tenant}\u0000${toolCallId}`,
      },
    );
    // A refusal may still have changed state (the call expired on the way): it is saved, then reported.
    if (result.kind === 'refused') throw result.error;
    const view = toolCallView(result.call.snapshot());
    return held ? { ...view, ...(held as HeldForApproval) } : view;
  }
}
