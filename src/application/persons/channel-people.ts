import { Inject, Injectable } from '@nestjs/common';
import { personThrough } from '../../domain/person/person';
import {
  AskEmail,
  knownLink,
  Linked,
  linkByEmail,
  staleSignIn,
  Unlinked,
} from '../../domain/person/rules/channel-link';
import type { Channel, Principal } from '../../domain/shared/actor';
import { CLOCK, Clock } from '../ports';
import { PERSONS, PersonRepository } from '../ports/person.port';

/** A channel user acting as the person linked to them, or why they cannot. */
export type ChannelPerson<V extends Channel> =
  { kind: 'person'; principal: Principal & { via: V; channelUser: string } } | Unlinked;

/**
 * Resolves a channel's user (a Slack user) to the person they are, by the settings' link or their verified email
 * (asked of the channel whenever the settings do not link them: a stored email link is re-checked on each use, and
 * stored again only when it changes). The person acts with the roles of their record, as last seen on their own
 * sign-in, and only while that sign-in is younger than `maxAgeSeconds`.
 */
@Injectable()
export class ChannelPeople {
  constructor(
    @Inject(PERSONS) private readonly persons: PersonRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async resolve<V extends Channel>(input: {
    tenant: string;
    channel: V;
    channelUser: string;
    /** The person the settings link this user to, if they do. */
    configured: string | undefined;
    /** The channel user's verified email, asked only when the settings do not link them (undefined: none verified). */
    verifiedEmail: () => Promise<string | undefined>;
    /** How old the person's last sign-in may be for their recorded roles to be trusted. */
    maxAgeSeconds: number;
  }): Promise<ChannelPerson<V>> {
    const { tenant, channel, channelUser, configured } = input;
    const [stored, configuredPerson] = await Promise.all([
      this.persons.linkOf(tenant, channel, channelUser),
      configured !== undefined ? this.persons.find(tenant, configured) : Promise.resolve(null),
    ]);
    let found: Linked | Unlinked | AskEmail = knownLink({ configured, configuredPerson, stored });
    if (found.kind === 'ask-email') {
      const email = await input.verifiedEmail();
      // A link that no longer holds is left stored but never honoured: every use re-checks it like this.
      found = linkByEmail(email, email ? await this.persons.withEmail(tenant, email) : [], found.linkedBefore);
    }
    if (found.kind !== 'person') return found;
    const stale = staleSignIn(found.person, this.clock.now(), input.maxAgeSeconds);
    if (stale) return stale;
    if (found.store)
      await this.persons.link({
        tenantId: tenant,
        channel,
        channelUser,
        personId: found.person.id,
        linkedBy: found.linkedBy,
        linkedAt: this.clock.now(),
      });
    return { kind: 'person', principal: personThrough(found.person, channel, channelUser) };
  }
}
