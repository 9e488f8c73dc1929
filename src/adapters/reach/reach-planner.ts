import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, Clock } from '../../application/ports';
import type { Person } from '../../domain/person/person';
import { deliveryFor, ReachChannel } from './preferences';
import { ReachStore } from './reach.store';

/**
 * Applies each person's settings to a message a channel is about to send them: those who want it now get it; for
 * those who want digests (or are in their quiet hours) a digest is made due instead; those who turned the channel
 * off get nothing. Channels call it with the people a request reaches (Deciders).
 */
@Injectable()
export class ReachPlanner {
  constructor(
    private readonly store: ReachStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async now(tenantId: string, channel: ReachChannel, people: readonly Person[]): Promise<Person[]> {
    return this.plan(tenantId, channel, people, true);
  }

  /** Those who want a message on `channel` now; the others get nothing (news that is no news in a digest: an FYI). */
  async onlyNow(tenantId: string, channel: ReachChannel, people: readonly Person[]): Promise<Person[]> {
    return this.plan(tenantId, channel, people, false);
  }

  private async plan(
    tenantId: string,
    channel: ReachChannel,
    people: readonly Person[],
    digests: boolean,
  ): Promise<Person[]> {
    if (people.length === 0) return [];
    const prefs = await this.store.preferencesOf(
      tenantId,
      people.map((p) => p.id),
    );
    const at = this.clock.now();
    const out: Person[] = [];
    for (const p of people) {
      const d = deliveryFor(prefs.get(p.id)!, channel, at);
      if (d.kind === 'now') out.push(p);
      else if (d.kind === 'digest' && digests) await this.store.digestDue({ tenantId, personId: p.id, channel }, d.at);
    }
    return out;
  }
}
