import { Command } from '@nestjs/cqrs';
import type { Principal } from '../../../domain/shared/actor';
import type { WebAuthnJson } from '../../ports/passkey.port';

/** What a step-up answers: the options for `navigator.credentials.get()`, and what the challenge was derived from. */
export interface StepUpOptions {
  publicKey: WebAuthnJson;
  toolCallId: string;
  /** SHA-256 hex of the RFC 8785 form of the arguments the approval will approve. */
  argumentsDigest: string;
}

/**
 * A person about to approve a call whose rule says `stepUp: passkey` asks for a challenge derived from the call
 * and the arguments they will approve (`arguments`: their edit; absent, the call's own or a quorum's fixed ones).
 */
export class RequestStepUpCommand extends Command<StepUpOptions> {
  constructor(
    readonly person: Principal,
    readonly toolCallId: string,
    readonly args?: Record<string, unknown>,
  ) {
    super();
  }
}
