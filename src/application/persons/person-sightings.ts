import { Inject, Injectable, Logger } from '@nestjs/common';
import { sightingOf } from '../../domain/person/person';
import type { Principal } from '../../domain/shared/actor';
import { CLOCK, Clock } from '../ports';
import { PERSONS, PersonRepository } from '../ports/person.port';

/** A sighting that changed nothing is written again only after this long (`last_seen_at` stays this fresh). */
export const SIGHTING_REFRESH_MS = 5 * 60_000;
/** Remembered sightings per instance; the oldest are forgotten first (and written again when next seen). */
const MAX_REMEMBERED = 10_000;

/**
 * Keeps a person record per tenant from the people's own authenticated requests (REST, the web inbox, the CLI,
 * gRPC): the id, name, email and roles their token carried last. It stays off the hot path's cost: a request
 * writes only when something changed or the record's `last_seen_at` is older than SIGHTING_REFRESH_MS.
 * Agents are not persons and are never recorded.
 */
@Injectable()
export class PersonSightings {
  private readonly log = new Logger('Persons');
  /** tenant + id → what was last written and when. */
  private readonly written = new Map<string, { fingerprint: string; at: number }>();

  constructor(
    @Inject(PERSONS) private readonly persons: PersonRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async seen(p: Principal): Promise<void> {
    const sighting = sightingOf(p);
    if (!sighting) return;
    const key = JSON.stringify([sighting.tenantId, sighting.id]);
    const fingerprint = JSON.stringify([sighting.name ?? null, sighting.email ?? null, [...sighting.roles].sort()]);
    const now = this.clock.now();
    const last = this.written.get(key);
    if (last && last.fingerprint === fingerprint && now.getTime() - last.at < SIGHTING_REFRESH_MS) return;
    try {
      await this.persons.seen(sighting, now);
    } catch (e) {
      // The request the person made goes on: their record is written on a later one.
      this.log.warn(`Could not record person ${sighting.id} of ${sighting.tenantId}: ${(e as Error).message}`);
      return;
    }
    this.written.delete(key); // re-inserted last: the Map's order is the order of writes
    this.written.set(key, { fingerprint, at: now.getTime() });
    if (this.written.size > MAX_REMEMBERED) this.written.delete(this.written.keys().next().value!);
  }
}
