import { Inject, Injectable, Optional } from '@nestjs/common';
import type { ProposedCall } from '../../domain/conversation/proposed-call';
import type { ToolCall } from '../../domain/conversation/tool-call.entity';
import { approvingArguments } from '../../domain/conversation/rules/step-up';
import { DomainError } from '../../domain/shared/domain-error';
import { maskArguments, restoreEdit, unionRedactions } from '../../domain/shared/redaction';
import { ARGUMENT_VAULT, ArgumentVault, SealedArguments } from '../ports/argument-vault.port';

/*
 * Secret arguments through a call's life (domain/shared/redaction for what is masked):
 * - proposed: the policy judges the real arguments; the call and its events keep them masked, the real ones sealed;
 * - edited: a person edits what they see; markers left as shown keep their real values, typed values become real
 *   values, and the edit is recorded masked (its real form sealed beside, keyed by the masked edit's digest);
 * - claimed: the claim opens the seal and answers the real arguments to run; the receipt binds those.
 */

/** No data key to mask, seal or open with (DATABASE_URL without TOLLGATE_DATA_KEY): nothing secret is taken or run. */
export class SecretArgumentsUnavailable extends DomainError {
  constructor() {
    super(
      'data_key_missing',
      'unavailable',
      'This call names secret arguments to mask, but no data key is configured: set TOLLGATE_DATA_KEY or TOLLGATE_DATA_KEY_FILE (openssl rand -base64 32)',
    );
  }
}
const noKey = () => new SecretArgumentsUnavailable();

@Injectable()
export class SecretArguments {
  constructor(@Optional() @Inject(ARGUMENT_VAULT) private readonly vault?: ArgumentVault) {}

  /**
   * The calls of a proposal as they are to be recorded: masked, with the real values sealed when anything was
   * masked; `real` gives back the call as proposed (for the policy) from its recorded form.
   */
  prepare(
    tenant: string,
    conversationId: string,
    calls: ProposedCall[],
    namesFor: (toolName: string) => readonly string[],
  ): { calls: ProposedCall[]; real: <T>(recorded: T) => T } {
    const back = new Map<unknown, ProposedCall>();
    const prepared = calls.map((call) => {
      const names = [...namesFor(call.toolName)];
      if (names.length === 0) return call;
      const vault = this.vault;
      if (!vault) throw noKey();
      // Sealed even when nothing was masked: the seal keeps the names, so a secret a person types into an edit
      // later is masked too. Without a data key only a call holding a secret is refused.
      const { masked, count } = maskArguments(call.arguments, names, (v) => vault.digest(v, tenant));
      const sealed: SealedArguments = { redact: names, arguments: call.arguments };
      let sealedArguments: string;
      try {
        sealedArguments = vault.seal(sealed, tenant, conversationId);
      } catch (e) {
        if (count === 0 && e instanceof DomainError && e.code === 'data_key_missing') return call;
        throw e;
      }
      const recorded = { ...call, arguments: masked, sealedArguments };
      back.set(recorded, call);
      return recorded;
    });
    return { calls: prepared, real: <T>(recorded: T) => (back.get(recorded) as T | undefined) ?? recorded };
  }

  /** The real arguments a claimed call runs with (a person's edit wins), opened from its seal. */
  argumentsToRun(tenant: string, call: ToolCall): Record<string, unknown> {
    if (!call.snapshot().sealedArguments) return call.argumentsToRun;
    return realOf(call.argumentsToRun, call, this.open(tenant, call), this.vault!, tenant);
  }

  /**
   * A person's edit of a call with secret arguments: what to record (masked), what it means (`real`: what would run,
   * for the checks of an edit such as its tool's input schema; never to be recorded) and, when the call has a seal,
   * the seal to keep with it. Calls without one are edited as they are (their arguments held no secret).
   */
  edit(
    tenant: string,
    call: ToolCall,
    edited: Record<string, unknown>,
  ): { arguments: Record<string, unknown>; real: Record<string, unknown>; seal?: string } {
    const s = call.snapshot();
    if (!s.sealedArguments) return { arguments: edited, real: edited };
    const vault = this.vault;
    if (!vault) throw noKey();
    const opened = this.open(tenant, call);
    // What the person saw: what an approval would approve now (a quorum's first edit, else the proposal).
    const shown = approvingArguments(call, {});
    const real = restoreEdit(edited, shown, realOf(shown, call, opened, vault, tenant)) as Record<string, unknown>;
    const { masked } = maskArguments(real, opened.redact, (v) => vault.digest(v, tenant));
    const edits = { ...opened.edits, [vault.digest(masked, tenant)]: real };
    return { arguments: masked, real, seal: vault.seal({ ...opened, edits }, tenant, s.conversationId) };
  }

  private open(tenant: string, call: ToolCall): SealedArguments {
    if (!this.vault) throw noKey();
    const s = call.snapshot();
    return this.vault.unseal(s.sealedArguments!, tenant, s.conversationId);
  }
}

/** The real form of masked arguments of `call`: its proposal's, a recorded edit's, else its markers restored. */
function realOf(
  masked: Record<string, unknown>,
  call: ToolCall,
  opened: SealedArguments,
  vault: ArgumentVault,
  tenant: string,
): Record<string, unknown> {
  if (masked === call.arguments) return opened.arguments;
  return (
    opened.edits?.[vault.digest(masked, tenant)] ??
    (restoreEdit(masked, call.arguments, opened.arguments) as Record<string, unknown>)
  );
}
