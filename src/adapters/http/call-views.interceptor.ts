import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import { mergeMap, Observable } from 'rxjs';
import { CALL_VIEWS, CallViews } from '../../application/ports/call-views.port';
import { CLOCK, Clock } from '../../application/ports';
import { isAgent, type Principal } from '../../domain/shared/actor';

type Shown = { id?: unknown; status?: unknown };

/**
 * When a person is first shown a held call's card (issue 28, part 9), as the server sees it: the one call in
 * GET /v1/tool-calls/{id}, which the web card fetches when it opens. Not the approvals list: an inbox left open
 * lists every pending call, and counting that as seeing each would make every approval look considered. Recorded
 * after the answer was made, so only calls the person may see; an agent's requests pass straight through. Time to
 * decide (GET /v1/audit/reviewers, HITL-03) runs from here rather than from a client's claim; a decision with no
 * view recorded runs from the request, and counts in the person's `unviewedShare`.
 */
@Injectable()
export class CallViewsInterceptor implements NestInterceptor {
  constructor(
    @Inject(CALL_VIEWS) private readonly views: CallViews,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (ctx.getType() !== 'http') return next.handle();
    const req = ctx.switchToHttp().getRequest<{ method?: string; principal?: Principal }>();
    const principal = req.principal;
    if (req.method !== 'GET' || !principal || isAgent(principal)) return next.handle();
    const route = `${ctx.getClass().name}.${ctx.getHandler().name}`;
    const ids = ROUTES[route];
    if (!ids) return next.handle();
    return next.handle().pipe(
      mergeMap(async (body: unknown) => {
        const shown = ids(body);
        if (shown.length > 0) await this.views.seen(principal.tenant, shown, principal.id, this.clock.now());
        return body;
      }),
    );
  }
}

const pendingId = (c: Shown): string[] => (c.status === 'pending' && typeof c.id === 'string' ? [c.id] : []);

const ROUTES: Record<string, (body: unknown) => string[]> = {
  'ToolCallsController.get': (body) => (body && typeof body === 'object' ? pendingId(body as Shown) : []),
};
