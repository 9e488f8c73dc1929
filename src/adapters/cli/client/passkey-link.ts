import { cardPath } from '../../../domain/conversation/conversation.errors';

/**
 * Calls whose rule asks for a passkey (`stepUp: passkey`) are approved only in the web inbox, where the person's
 * passkey signs for them: the terminal cannot. The CLI offers no approve key for them and links to the call's card.
 */

/** The call's held approval says a passkey must sign each approval (the view's `approval.stepUp`). */
export function needsPasskey(call: { approval?: object | null }): boolean {
  return (call.approval as { stepUp?: unknown } | null | undefined)?.stepUp === 'passkey';
}

/**
 * The address of a call's card at `base` (the server the CLI talks to). Browsers refuse passkeys on an IP address
 * (WebAuthn has no relying party there), and without TOLLGATE_PUBLIC_URL the server's is `localhost`: a loopback or
 * unspecified IP becomes `localhost`, where the inbox can ask for the passkey.
 */
export function passkeyCardUrl(base: string, toolCallId: string): string {
  return `${passkeyBase(base)}${cardPath(toolCallId)}`;
}

/** A card path as the server's problems carry it (`card`: `/#/calls/<id>`), checked before it is printed. */
const CARD = /^\/#\/calls\/[A-Za-z0-9._~%-]{1,200}$/;

/**
 * Where a refusal points (the problem's `card`, made absolute at `base`), or undefined: problems about a passkey
 * link where the passkey works (see passkeyCardUrl).
 */
export function problemCardUrl(base: string, problem: object): string | undefined {
  const { card, stepUp } = problem as { card?: unknown; stepUp?: unknown };
  if (typeof card !== 'string' || !CARD.test(card)) return undefined;
  return `${stepUp === 'passkey' ? passkeyBase(base) : base.replace(/\/+$/, '')}${card}`;
}

/**
 * The address a browser on this machine should open: `localhost` for a loopback or unspecified IP, since browsers
 * refuse passkeys on IP addresses (and a session is kept per host name, so one address throughout).
 */
export function passkeyBase(base: string): string {
  const url = new URL(base);
  // A server listening on every interface (0.0.0.0, ::) is reached on this machine at localhost as well.
  if (['127.0.0.1', '[::1]', '0.0.0.0', '[::]'].includes(url.hostname)) url.hostname = 'localhost';
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}
