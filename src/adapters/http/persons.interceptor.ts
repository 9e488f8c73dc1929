import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { from, Observable, switchMap } from 'rxjs';
import { PersonSightings } from '../../application/persons/person-sightings';
import { isAgent, type Principal } from '../../domain/shared/actor';

/**
 * Records the person behind every authenticated HTTP request (REST, the web inbox, the CLI), after the guard
 * established who they are; PersonSightings writes only when something changed or the record grew stale.
 */
@Injectable()
export class PersonSightingsInterceptor implements NestInterceptor {
  constructor(private readonly sightings: PersonSightings) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (ctx.getType() !== 'http') return next.handle();
    const principal = ctx.switchToHttp().getRequest<{ principal?: Principal }>().principal;
    // Agents are not persons: their requests (the hot path) pass straight through.
    if (!principal || isAgent(principal)) return next.handle();
    return from(this.sightings.seen(principal)).pipe(switchMap(() => next.handle()));
  }
}
