import type { Person } from '../../domain/person/person';
import type { PersonRepository } from '../ports/person.port';
import { PersonSightings, SIGHTING_REFRESH_MS } from './person-sightings';

/** Counts the writes a sighting makes (the cache's whole point); what is written is checked end to end. */
class CountingPersons implements Pick<PersonRepository, 'seen'> {
  readonly writes: Array<Pick<Person, 'tenantId' | 'id' | 'name' | 'email' | 'roles'>> = [];
  fail = false;
  async seen(p: Pick<Person, 'tenantId' | 'id' | 'name' | 'email' | 'roles'>): Promise<void> {
    if (this.fail) throw new Error('database down');
    this.writes.push(p);
  }
}

describe('person sightings', () => {
  let now: number;
  let persons: CountingPersons;
  let sightings: PersonSightings;
  beforeEach(() => {
    now = Date.parse('2026-01-01T00:00:00Z');
    persons = new CountingPersons();
    sightings = new PersonSightings(persons as unknown as PersonRepository, { now: () => new Date(now) });
  });
  const ann = { id: 'ann', tenant: 't', roles: ['approver'], name: 'Ann', email: 'ann@example.com' };

  it('writes a person once, then again only when something changed or the record grew stale', async () => {
    await sightings.seen(ann);
    await sightings.seen({ ...ann, roles: ['approver'] });
    expect(persons.writes).toHaveLength(1);
    await sightings.seen({ ...ann, roles: ['approver', 'admin'] });
    expect(persons.writes).toHaveLength(2);
    now += SIGHTING_REFRESH_MS - 1;
    await sightings.seen({ ...ann, roles: ['admin', 'approver'] }); // the same roles in another order
    expect(persons.writes).toHaveLength(2);
    now += 1;
    await sightings.seen({ ...ann, roles: ['admin', 'approver'] });
    expect(persons.writes).toHaveLength(3);
  });

  it('keeps tenants apart: the same id in another tenant is another person', async () => {
    await sightings.seen(ann);
    await sightings.seen({ ...ann, tenant: 'u' });
    expect(persons.writes.map((w) => w.tenantId)).toEqual(['t', 'u']);
  });

  it('never records an agent', async () => {
    await sightings.seen({ id: 'bot', tenant: 't', roles: ['agent'] });
    expect(persons.writes).toEqual([]);
  });

  it('lets the request go on when the write fails, and writes on the next one', async () => {
    persons.fail = true;
    await expect(sightings.seen(ann)).resolves.toBeUndefined();
    persons.fail = false;
    await sightings.seen(ann);
    expect(persons.writes).toHaveLength(1);
  });
});
