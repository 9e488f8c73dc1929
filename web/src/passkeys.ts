/**
 * Passkeys in the inbox: the shapes of the /v1/me/passkeys routes and the step-up route, and the pure rules the
 * panel and the card share (whether this page can use passkeys at all, what a failed prompt means to a person).
 */
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/browser';
import { needsPasskey, type StepUp, type StepUpOptions as SdkStepUpOptions } from '@tollgate/sdk';
import type { Decision } from './types';

export type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
};

/** GET /v1/me/passkeys: one of the person's passkeys (the SDK's, named by the API's schema). */
export type { Passkey } from '@tollgate/sdk';

/**
 * POST /v1/me/passkeys/options: `assertion` is there when the person has a passkey already (it must sign first).
 * The SDK's shape, with the options typed as @simplewebauthn/browser takes them.
 */
export interface RegistrationOptions {
  publicKey: PublicKeyCredentialCreationOptionsJSON;
  assertion?: { publicKey: PublicKeyCredentialRequestOptionsJSON };
}

/** POST /v1/tool-calls/{id}/step-up: a challenge bound to the call and the arguments the person will approve. */
export type StepUpOptions = Omit<SdkStepUpOptions, 'publicKey'> & { publicKey: PublicKeyCredentialRequestOptionsJSON };

/** What a decision made with a passkey shows (the call's `decision.stepUp`). */
export type StepUpView = StepUp;

/** The call's rule asks for a passkey to approve it (`approval.stepUp`): the SDK's test, which the MCP chat uses too. */
export { needsPasskey };

/** The passkey a decision was made with, if it was. */
export function stepUpOf(decision: Partial<Decision> | undefined): StepUpView | undefined {
  const s = decision?.stepUp;
  return s?.method === 'passkey' ? s : undefined;
}

/**
 * True when the page was reached by an IP address: WebAuthn refuses IP-address origins (a relying party is a
 * domain), so no passkey can be made or used here. `hostname` as `location.hostname` gives it (IPv6 in brackets).
 */
export function isIpAddressHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '');
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(h)) return h.split('.').every((o) => Number(o) <= 255);
  return h.includes(':') && /^[0-9a-f:.]+(%.+)?$/i.test(h);
}

/** The same page by the name `localhost` (same port and path), where this machine's passkeys work. */
export function localhostHref(loc: Pick<Location, 'protocol' | 'port' | 'pathname' | 'search' | 'hash'>): string {
  return `${loc.protocol}//localhost${loc.port ? `:${loc.port}` : ''}${loc.pathname}${loc.search}${loc.hash}`;
}

/**
 * The browser's prompt was dismissed, timed out or refused (NotAllowedError, which WebAuthn uses for all three so a
 * page cannot tell which): nothing was signed, nothing changed. The person sees "Cancelled", not an error.
 */
export function isCancelled(e: unknown): boolean {
  return (
    (e as { name?: unknown } | null)?.name === 'NotAllowedError' || (e as { name?: unknown })?.name === 'AbortError'
  );
}

/**
 * What a cancelled prompt says. Browsers report a failed fingerprint or PIN the same way as a dismissed prompt, so
 * the words name both.
 */
export const CANCELLED =
  'Cancelled, or this device holds none of your passkeys or could not confirm it is you: nothing changed.';

/** A WebAuthn failure in words: the browser's own message, except for the cases people meet. */
export function webAuthnErrorText(e: unknown): string {
  const name = (e as { name?: unknown } | null)?.name;
  if (isCancelled(e)) return CANCELLED;
  if (name === 'InvalidStateError') return 'This authenticator already holds one of your passkeys: use another one.';
  if (name === 'SecurityError')
    return 'The browser refused passkeys on this address (they need https, or the name localhost on this machine).';
  if (name === 'NotSupportedError') return 'This browser or authenticator cannot make such a passkey.';
  return (e as Error)?.message || String(e);
}

/** The body of POST /v1/tool-calls/{id}/step-up: the edited arguments the person will approve, if they edited them. */
export function stepUpRequest(body: { decision: string; arguments?: Record<string, unknown> }): {
  arguments?: Record<string, unknown>;
} {
  return body.decision === 'approve' && body.arguments !== undefined ? { arguments: body.arguments } : {};
}
