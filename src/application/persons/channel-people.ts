import { Inject, Injectable } from '@nestjs/common';
import { Person, personThrough } from '../../domain/person/person';
import { knownLink, Linked, linkByEmail, Unlinked } from '../../domain/person/rules/channel-link';
import type { Channel, Principal } from '../../domain/shared/actor';
import { CLOCK, Clock } from '../ports';
import { PERSONS, PersonRepository } from '../ports/person.port';

/** A channel user acting as the person linked to them, or why they cannot. */
export type ChannelPerson<V extends Channel> =
  { kind: 'person'; principal: Principal & { via: V; channelUser: string } } | Unlinked;

/**
 * Resolves a channel's user (a Slack user) to the person they are, by the settings' link, a stored link, or their
 * verified email (asked of the channel only when nothing else links them; the link is then stored). The person
 * acts with the roles of their record, as last seen on their own sign-in.
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
    /** The channel user's verified email, asked only when no link is known (undefined: none verified). */
    verifiedEmail: () => Promise<string | undefined>;
  }): Promise<ChannelPerson<V>> {
    const { tenant, channel, channelUser, configured } = input;
    const [stored, configuredPerson] = await Promise.all([
      this.persons.linkOf(tenant, channel, channelUser),
      configured !== undefined ? this.persons.find(tenant, configured) : Promise.resolve(null),
    ]);
    const storedPerson: Person | null =
      stored?.linkedBy === 'email' && configured === undefined
        ? await this.persons.find(tenant, stored.personId)
        : null;
    let found: Linked | Unlinked | { kind: 'ask-email' } = knownLink({
      configured,
      configuredPerson,
      stored,
      storedPerson,
    });
    if (found.kind === 'ask-email') {
      const email = await input.verifiedEmail();
      found = linkByEmail(email, email ? await this.persons.withEmail(tenant, email) : []);
    }
    if (found.kind !== 'person') return found;
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
