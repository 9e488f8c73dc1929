import type { DecisionChannel, TollgateClient, WaitOptions } from './client.js';
import type {
  AssertionOptionsRequest,
  Passkey,
  PasskeyAssertionOptions,
  PasskeyList,
  PasskeyRegistrationOptions,
  RegisterPasskeyRequest,
  RemovePasskeyRequest,
  ToolCall,
  WebAuthnResponseJSON,
} from './types.js';

/**
 * The call's rule asks for a passkey on each approval (`approval.stepUp`): approve it with `inbox.stepUp` and the
 * assertion as the decision's `stepUp`. Slack, the CLI and chat cannot sign, so they send people to the web inbox.
 */
export function needsPasskey(call: Pick<ToolCall, 'approval'>): boolean {
  return call.approval?.stepUp === 'passkey';
}

/**
 * `tollgate.passkeys`: the caller's own passkeys (people only; an agent token gets 403 forbidden). The options
 * are for the browser's WebAuthn (@simplewebauthn/browser: `startRegistration({ optionsJSON: o.publicKey })`,
 * `startAuthentication(…)`); send what it returns as it is. Each challenge answers once, within 5 minutes.
 */
export class Passkeys {
  constructor(private readonly tollgate: TollgateClient) {}

  /** The caller's passkeys (operationId listPasskeys). */
  async list(o: WaitOptions = {}): Promise<Passkey[]> {
    return (await this.tollgate.request<PasskeyList>('GET', '/v1/me/passkeys', { signal: o.signal })).passkeys;
  }

  /**
   * Options to register a passkey; with `assertion` when the caller holds passkeys already: adding another needs an
   * assertion with one of them (operationId passkeyRegistrationOptions).
   */
  registrationOptions(o: WaitOptions = {}): Promise<PasskeyRegistrationOptions> {
    return this.tollgate.request<PasskeyRegistrationOptions>('POST', '/v1/me/passkeys/options', { signal: o.signal });
  }

  /**
   * Registers the passkey the browser made (operationId registerPasskey). 400 passkey_invalid when it does not
   * verify; 403 step_up_required when the caller holds passkeys and `assertion` is not a valid one of theirs.
   */
  register(
    body: { response: WebAuthnResponseJSON; name?: string; assertion?: WebAuthnResponseJSON },
    o: WaitOptions & { channel?: DecisionChannel } = {},
  ): Promise<Passkey> {
    return this.tollgate.request<Passkey>('POST', '/v1/me/passkeys', {
      body: body as RegisterPasskeyRequest,
      signal: o.signal,
      headers: this.tollgate.channelHeader(o.channel),
      // Its challenge answers once: a retry after a lost answer would be refused, not register it twice.
      idempotent: false,
    });
  }

  /**
   * Options for the assertion a change needs, for that change only (operationId passkeyAssertionOptions):
   * `purpose` `remove` (the default) for `remove`, `revoke` for an admin's removal of another person's passkey.
   */
  assertionOptions(o: AssertionOptionsRequest & WaitOptions = {}): Promise<PasskeyAssertionOptions> {
    return this.tollgate.request<PasskeyAssertionOptions>('POST', '/v1/me/passkeys/assertion-options', {
      body: o.purpose !== undefined ? { purpose: o.purpose } : {},
      signal: o.signal,
    });
  }

  /**
   * Removes one of the caller's passkeys, with an assertion made with one of them (the one removed may make it)
   * (operationId removePasskey). 403 step_up_required without a valid one; 404 for an id the caller does not hold.
   */
  async remove(
    id: string,
    assertion: WebAuthnResponseJSON,
    o: WaitOptions & { channel?: DecisionChannel } = {},
  ): Promise<void> {
    await this.tollgate.request<void>('DELETE', `/v1/me/passkeys/${encodeURIComponent(id)}`, {
      body: { assertion } as RemovePasskeyRequest,
      signal: o.signal,
      headers: this.tollgate.channelHeader(o.channel),
      idempotent: false,
    });
  }
}
