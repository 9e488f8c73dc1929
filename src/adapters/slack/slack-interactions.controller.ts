import { Controller, HttpCode, Inject, Post, Req } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { ValidationError } from '../../domain/shared/domain-error';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import { Public } from '../http/auth';
import { verifySlackSignature } from './slack-signature';
import { SlackAck, SlackInteraction, SlackInteractions } from './slack-interactions';
import { UnauthenticatedError } from '../api/errors';

export const SLACK_INTERACTIONS_PATH = '/v1/slack/interactions';
/** The body parsers keep this route's exact bytes in `rawBody` (server.ts: `rawBodyRoutes`). */
type RawRequest = FastifyRequest & { rawBody?: Buffer };

/**
 * Slack's interactivity URL. No bearer token: the signature over the raw body is the credential, so
 * nothing is parsed, let alone decided, before it verifies.
 */
@ApiExcludeController()
@Controller()
export class SlackInteractionsController {
  constructor(
    private readonly interactions: SlackInteractions,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
  ) {}

  @Public()
  @Post(SLACK_INTERACTIONS_PATH.slice(1))
  @HttpCode(200)
  async interact(@Req() req: RawRequest): Promise<SlackAck> {
    const raw = req.rawBody ?? Buffer.alloc(0);
    const check = verifySlackSignature(
      this.config.slack!.signingSecret,
      { timestamp: req.headers['x-slack-request-timestamp'], signature: req.headers['x-slack-signature'] },
      raw,
    );
    if (!check.ok) throw new UnauthenticatedError(check.reason);
    return this.interactions.handle(parsePayload(raw));
  }
}

/** Slack posts `application/x-www-form-urlencoded` with one field, `payload`, holding JSON. */
function parsePayload(raw: Buffer): SlackInteraction {
  const json = new URLSearchParams(raw.toString('utf8')).get('payload');
  let payload: unknown;
  try {
    payload = JSON.parse(json ?? '');
  } catch {
    throw new ValidationError([{ path: 'payload', message: 'must be the JSON of a Slack interaction' }]);
  }
  if (!payload || typeof payload !== 'object' || typeof (payload as { type?: unknown }).type !== 'string') {
    throw new ValidationError([{ path: 'payload.type', message: 'must be a string' }]);
  }
  return payload as SlackInteraction;
}
