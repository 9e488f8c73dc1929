import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type {
  ActionChannel,
  ActionDecision,
  ActionGrant,
  ActionTokens,
} from '../../application/ports/action-token.port';
import { RECEIPTS } from '../../application/ports';
import type { JoseReceiptSigner } from '../../infrastructure/receipts/receipt-signer';

/** The JWS type of an action token: no receipt or checkpoint verifier takes it, nor this one theirs. */
export const ACTION_TYP = 'tollgate-action+jwt';

/** A verified action token: its grant and the id that is spent once it is used. */
export type OpenedAction = ActionGrant & { jti: string };

const DECISIONS: readonly ActionDecision[] = ['approve', 'reject'];
const VIA: readonly ActionChannel[] = ['push', 'email'];

/**
 * Action tokens as compact JWS signed with the instance's receipt key (Ed25519): any instance verifies them, the
 * database keeps nothing until one is used. The claims are short (they ride in URLs and push payloads of at most
 * 4 KB): `tn` tenant, `sub` person, `tc` call, `ad` arguments digest, `act` decision, `via`, `exp`, `jti`.
 */
@Injectable()
export class SignedActionTokens implements ActionTokens {
  constructor(@Inject(RECEIPTS) private readonly signer: JoseReceiptSigner) {}

  issue(g: ActionGrant): Promise<string> {
    return this.signer.signPayload(
      {
        tn: g.tenant,
        sub: g.person,
        tc: g.toolCallId,
        ad: g.argumentsDigest,
        act: g.decision,
        via: g.via,
        exp: Math.floor(g.expiresAt.getTime() / 1000),
        jti: randomUUID(),
      },
      ACTION_TYP,
    );
  }

  /** The grant of a token this instance signed, whatever its expiry (the caller tells expired apart); else undefined. */
  async open(token: string): Promise<OpenedAction | undefined> {
    const c = await this.signer.verifyPayload(token, ACTION_TYP);
    if (!c) return undefined;
    const str = (k: string) =>
      typeof c[k] === 'string' && (c[k] as string).length <= 512 ? (c[k] as string) : undefined;
    const [tenant, person, toolCallId, argumentsDigest, jti] = [
      str('tn'),
      str('sub'),
      str('tc'),
      str('ad'),
      str('jti'),
    ];
    const decision = DECISIONS.find((d) => d === c.act);
    const via = VIA.find((v) => v === c.via);
    if (!tenant || !person || !toolCallId || !argumentsDigest || !jti || !decision || !via) return undefined;
    if (typeof c.exp !== 'number' || !Number.isFinite(c.exp)) return undefined;
    return { tenant, person, toolCallId, argumentsDigest, decision, via, jti, expiresAt: new Date(c.exp * 1000) };
  }
}
