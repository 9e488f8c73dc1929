import { Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../http/auth';
import { ActionDesk, ActionRefusal, MAX_REASON } from './action-desk';
import { ACTION_PATH } from './action-links';
import { ACTION_PAGE_CSP, confirmationPage, donePage, refusedPage } from './action-pages';

/** The route pattern whose body the parsers leave raw (server.ts `rawBodyRoutes`): a form, or nothing. */
export const ACTION_ROUTE = `${ACTION_PATH}/:token`;

type RawRequest = FastifyRequest & { rawBody?: Buffer };

/**
 * Single-use Approve / Reject links of push notifications and emails. No bearer token: the signed token is the
 * credential, and it names the one person it acts for. GET (and HEAD) show a confirmation page and change nothing,
 * since mail scanners and link previews follow links; POST uses the token. A POST asking for JSON (the service
 * worker) gets JSON or a problem; a form gets a page. Pages are never cached and send no Referer (the token is in
 * the URL).
 */
@ApiExcludeController()
@Controller()
export class ActionsController {
  constructor(private readonly desk: ActionDesk) {}

  @Public()
  @Get(ACTION_ROUTE.slice(1))
  async confirm(@Param('token') token: string, @Res() res: FastifyReply): Promise<void> {
    const r = await this.desk.look(token);
    if (r.kind === 'refused') return html(res, r.status, refusedPage(r));
    // No view is recorded here: mail scanners and link previews follow links (GET) too, and would make every
    // decision look considered. A decision by link is timed from the request (issue 28, part 9: HITL-03).
    html(res, 200, confirmationPage(r, `${ACTION_PATH}/${token}`));
  }

  @Public()
  @Post(ACTION_ROUTE.slice(1))
  @HttpCode(200)
  async act(@Param('token') token: string, @Req() req: RawRequest, @Res() res: FastifyReply): Promise<void> {
    const json = wantsJson(req);
    const reason = formReason(req);
    if (typeof reason === 'object') return answer(res, json, reason);
    const r = await this.desk.use(token, reason);
    if (r.kind === 'refused') return answer(res, json, r);
    if (!json) return html(res, 200, donePage(r));
    res
      .code(200)
      .header('Cache-Control', 'no-store')
      .type('application/json')
      .send({
        outcome: r.call.status === 'pending' ? 'counted' : r.action.decision === 'approve' ? 'approved' : 'rejected',
        toolCallId: r.call.id,
        status: r.call.status,
      });
  }
}

function wantsJson(req: FastifyRequest): boolean {
  return /application\/(problem\+)?json/i.test(String(req.headers.accept ?? ''));
}

/** The form's optional `reason`; a body that is not a small form is refused. */
function formReason(req: RawRequest): string | undefined | ActionRefusal {
  const raw = req.rawBody;
  if (!raw || raw.length === 0) return undefined;
  const type = String(req.headers['content-type'] ?? '');
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type))
    return bad(415, 'unsupported_media_type', 'Send a form (application/x-www-form-urlencoded) or nothing');
  if (raw.length > MAX_REASON * 12) return bad(413, 'payload_too_large', 'The form is too large');
  const reason = new URLSearchParams(raw.toString('utf8')).get('reason') ?? undefined;
  if (reason !== undefined && reason.length > MAX_REASON)
    return bad(400, 'validation_failed', `The reason is longer than ${MAX_REASON} characters`);
  return reason;
}

function bad(status: number, code: string, detail: string): ActionRefusal {
  return { kind: 'refused', status, code, title: 'Tollgate cannot read this form', detail };
}

function answer(res: FastifyReply, json: boolean, r: ActionRefusal): void {
  if (!json) return html(res, r.status, refusedPage(r));
  res
    .code(r.status)
    .header('Cache-Control', 'no-store')
    .type('application/problem+json; charset=utf-8')
    .send(
      JSON.stringify({
        type: `urn:tollgate:problem:${r.code}`,
        title: r.title,
        status: r.status,
        detail: r.detail,
        code: r.code,
        ...(r.card ? { card: r.card } : {}),
      }),
    );
}

function html(res: FastifyReply, status: number, body: string): void {
  res
    .code(status)
    .header('Content-Security-Policy', ACTION_PAGE_CSP)
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Content-Type-Options', 'nosniff')
    .header('X-Frame-Options', 'DENY')
    .type('text/html; charset=utf-8')
    .send(body);
}
