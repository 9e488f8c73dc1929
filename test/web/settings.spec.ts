/** The Settings page's pure parts: the reach form's body, the time zone offered, local times, refusals per field. */
import { TollgateError } from '@tollgate/sdk';
import {
  CADENCES,
  delegationBody,
  delegationForm,
  delegationState,
  formErrors,
  isoFromLocal,
  localInput,
  personLabel,
  reachBody,
  reachForm,
  zoneSuggestion,
} from '../../web/src/settings';
import type { components } from '../../packages/sdk/src/generated/api';
import type { Delegation, DelegationRequest, NotificationSettings } from '../../web/src/types';

/** The page's copies of the API's shapes are the generated ones, member for member (checked by the typecheck). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Schemas = components['schemas'];
const shapes: [
  Same<NotificationSettings, Schemas['NotificationPreferences']>,
  Same<Delegation, Schemas['Delegation']>,
  Same<DelegationRequest, Schemas['SetDelegationRequest']>,
] = [true, true, true];

const defaults: NotificationSettings = {
  email: 'immediate',
  push: 'immediate',
  slack: 'off',
  dailyAt: '09:00',
  timeZone: 'UTC',
  quietHours: null,
};

const problem = (code: string, detail: string, extra: object = {}) =>
  new TollgateError({ type: 'about:blank', title: code, status: 400, code, detail, ...extra });

describe('the reach form', () => {
  it('offers the four choices a channel has, in words', () => {
    expect(CADENCES.map((c) => [c.value, c.label])).toEqual([
      ['immediate', 'A message per request'],
      ['hourly', 'Hourly digest'],
      ['daily', 'Daily digest'],
      ['off', 'Off'],
    ]);
  });

  it("has the API's shapes", () => {
    expect(shapes).toEqual([true, true, true]);
  });

  it('reads settings without quiet hours, null or left out, as none', () => {
    const { quietHours: _none, ...without } = defaults;
    expect(reachForm(without).quiet).toBe(false);
    expect(reachBody(reachForm(without)).quietHours).toBeNull();
  });

  it('sends back what it read, unchanged', () => {
    expect(reachBody(reachForm(defaults))).toEqual(defaults);
    const night = { ...defaults, quietHours: { from: '23:00', to: '06:30' } };
    expect(reachBody(reachForm(night))).toEqual(night);
  });

  it('offers the night when quiet hours are first switched on, and sends null when they are off', () => {
    const f = reachForm(defaults);
    expect([f.quiet, f.quietFrom, f.quietTo]).toEqual([false, '22:00', '07:00']);
    expect(reachBody({ ...f, quiet: true }).quietHours).toEqual({ from: '22:00', to: '07:00' });
    expect(reachBody({ ...f, quiet: false, quietFrom: '01:00' }).quietHours).toBeNull();
  });

  it('trims the time zone as typed', () => {
    expect(reachBody({ ...reachForm(defaults), timeZone: ' Europe/Berlin ' }).timeZone).toBe('Europe/Berlin');
  });
});

describe('zoneSuggestion', () => {
  it("offers the browser's zone while the stored one is UTC", () => {
    expect(zoneSuggestion('UTC', 'Europe/Berlin')).toBe('Europe/Berlin');
    expect(zoneSuggestion('Etc/UTC', 'America/New_York')).toBe('America/New_York');
  });

  it('offers nothing once a zone was chosen, or when the browser is in UTC too, or does not say', () => {
    expect(zoneSuggestion('Europe/Lisbon', 'Europe/Berlin')).toBeUndefined();
    expect(zoneSuggestion('UTC', 'UTC')).toBeUndefined();
    expect(zoneSuggestion('UTC', 'Etc/UTC')).toBeUndefined();
    expect(zoneSuggestion('UTC', undefined)).toBeUndefined();
  });
});

describe('local date-times', () => {
  const berlin = 'Europe/Berlin';

  it('reads a datetime-local value as clocks in the zone show it, summer and winter', () => {
    expect(isoFromLocal('2026-08-03T09:00', berlin)).toBe('2026-08-03T07:00:00.000Z');
    expect(isoFromLocal('2026-12-24T18:30', berlin)).toBe('2026-12-24T17:30:00.000Z');
    expect(isoFromLocal('2026-12-24T18:30:15', berlin)).toBe('2026-12-24T17:30:15.000Z');
  });

  it('gives an instant back as the input shows it', () => {
    expect(localInput('2026-08-03T07:00:00.000Z', berlin)).toBe('2026-08-03T09:00');
    expect(localInput('2026-12-31T23:30:00.000Z', berlin)).toBe('2027-01-01T00:30');
    expect(isoFromLocal(localInput('2026-03-29T10:15:00.000Z', berlin), berlin)).toBe('2026-03-29T10:15:00.000Z');
  });

  it('takes a time the clocks skip as the time they show then', () => {
    // 29 March 2026, Berlin: 02:00 becomes 03:00.
    expect(localInput(isoFromLocal('2026-03-29T02:30', berlin)!, berlin)).toBe('2026-03-29T03:30');
  });

  it('takes a time the clocks show twice as the later one', () => {
    // 25 October 2026, Berlin: 03:00 summer time becomes 02:00 again.
    expect(isoFromLocal('2026-10-25T02:30', berlin)).toBe('2026-10-25T01:30:00.000Z');
  });

  it('works in any zone, whatever the machine running it is set to', () => {
    expect(isoFromLocal('2026-08-03T09:00', 'America/New_York')).toBe('2026-08-03T13:00:00.000Z');
    expect(isoFromLocal('2026-08-03T09:00', 'Asia/Kolkata')).toBe('2026-08-03T03:30:00.000Z');
    expect(isoFromLocal('2026-08-03T09:00', 'UTC')).toBe('2026-08-03T09:00:00.000Z');
    expect(localInput('2026-08-03T03:30:00.000Z', 'Asia/Kolkata')).toBe('2026-08-03T09:00');
    expect(localInput('2026-01-01T02:00:00.000Z', 'America/Los_Angeles')).toBe('2025-12-31T18:00');
  });

  it.each(['', 'tomorrow', '2026-02-30T10:00', '2026-13-01T10:00', '2026-08-03T24:00', '2026-08-03 09:00'])(
    'refuses %j',
    (value) => {
      expect(isoFromLocal(value, berlin)).toBeUndefined();
    },
  );

  it('fills the form from a delegation: its start only while it is still to come', () => {
    const d = {
      to: { id: 'bob', name: 'Bob' },
      from: '2026-08-03T07:00:00.000Z',
      until: '2026-08-14T16:00:00.000Z',
      reason: 'Holiday',
      active: false,
    };
    expect(delegationForm(d, Date.parse('2026-08-01T00:00:00Z'), berlin)).toEqual({
      to: 'bob',
      from: '2026-08-03T09:00',
      until: '2026-08-14T18:00',
      reason: 'Holiday',
    });
    expect(delegationForm({ ...d, active: true }, Date.parse('2026-08-05T00:00:00Z'), berlin).from).toBe('');
    expect(delegationForm(null, 0, berlin)).toEqual({ to: '', from: '', until: '', reason: '' });
  });

  it('sends the delegation as instants, leaving out what is empty', () => {
    expect(
      delegationBody({ to: ' bob@example.com ', from: '', until: '2026-08-14T18:00', reason: ' ' }, berlin),
    ).toEqual({
      ok: true,
      body: { to: 'bob@example.com', until: '2026-08-14T16:00:00.000Z' },
    });
    expect(
      delegationBody({ to: 'bob', from: '2026-08-03T09:00', until: '2026-08-14T18:00', reason: 'Holiday' }, berlin),
    ).toEqual({
      ok: true,
      body: { to: 'bob', from: '2026-08-03T07:00:00.000Z', until: '2026-08-14T16:00:00.000Z', reason: 'Holiday' },
    });
  });

  it('asks for whom and until when before sending anything', () => {
    expect(delegationBody({ to: '', from: '', until: '', reason: '' }, berlin)).toEqual({
      ok: false,
      errors: { to: expect.stringMatching(/^Whom\?/), until: expect.stringMatching(/^Until when\?/) },
    });
    expect(
      delegationBody({ to: 'bob', from: '2026-02-30T10:00', until: '2026-08-14T18:00', reason: '' }, berlin),
    ).toEqual({
      ok: false,
      errors: { from: 'Not a date and time.' },
    });
  });
});

describe('delegationState', () => {
  const d = { from: '2026-08-03T07:00:00.000Z', until: '2026-08-14T16:00:00.000Z', active: false };
  it('is planned before its start, active from it, over at its end', () => {
    expect(delegationState(d, Date.parse('2026-08-03T06:59:59Z'))).toBe('planned');
    expect(delegationState(d, Date.parse('2026-08-03T07:00:00Z'))).toBe('active');
    expect(delegationState(d, Date.parse('2026-08-14T15:59:59Z'))).toBe('active');
    expect(delegationState(d, Date.parse('2026-08-14T16:00:00Z'))).toBe('over');
  });

  it("takes the server's word that it holds, though the page's clock is behind", () => {
    expect(delegationState({ ...d, active: true }, Date.parse('2026-08-03T06:59:59Z'))).toBe('active');
    expect(delegationState({ ...d, active: true }, Date.parse('2026-08-14T16:00:00Z'))).toBe('over');
  });
});

describe('personLabel', () => {
  it('names a person, with the id that finds them', () => {
    expect(personLabel({ id: 'bob', name: 'Bob' })).toBe('Bob (bob)');
    expect(personLabel({ id: 'bob' })).toBe('bob');
    expect(personLabel({ id: 'bob', name: 'bob' })).toBe('bob');
  });
});

describe('formErrors', () => {
  const fields = ['email', 'dailyAt', 'timeZone', 'quietHours'];
  const words = (e: unknown) => `words for ${(e as Error).message}`;

  it('puts each validation fault on the field it names, by the first part of its path', () => {
    const e = problem('validation_failed', 'quietHours: must be …; timeZone: must be …', {
      errors: [
        { path: 'quietHours', message: 'must be null or {from, to}, two different times HH:MM' },
        { path: 'timeZone', message: 'must be an IANA time zone' },
        { path: 'quietHours.from', message: 'is late' },
      ],
    });
    expect(formErrors(e, fields, words)).toEqual({
      fields: {
        quietHours: 'must be null or {from, to}, two different times HH:MM; is late',
        timeZone: 'must be an IANA time zone',
      },
    });
  });

  it('says what it cannot place on a field for the whole form', () => {
    const e = problem('validation_failed', 'x', {
      errors: [
        { path: 'colour', message: 'is not a setting' },
        { path: '', message: 'must be a JSON object' },
      ],
    });
    expect(formErrors(e, fields, words)).toEqual({
      fields: {},
      other: 'colour is not a setting; must be a JSON object',
    });
    expect(formErrors(problem('validation_failed', 'the detail'), fields, words)).toEqual({
      fields: {},
      other: 'the detail',
    });
  });

  it("shows a refused delegate's sentence at the `to` field", () => {
    for (const code of ['unknown_person', 'delegation_to_self', 'delegate_is_agent', 'ambiguous_person']) {
      expect(formErrors(problem(code, `the server's words for ${code}`), ['to', 'until'], words)).toEqual({
        fields: { to: `the server's words for ${code}` },
      });
    }
  });

  it('words anything else, a lost connection included, for the whole form', () => {
    const down = new TollgateError(
      { type: 'about:blank', title: 'x', status: 0, code: 'network_error', detail: 'no answer' },
      { cause: new Error('fetch failed') },
    );
    expect(formErrors(down, fields, words).other).toBe('words for network_error: no answer');
    expect(formErrors(problem('unknown_person', 'nobody'), fields, words)).toEqual({
      fields: {},
      other: 'words for unknown_person: nobody',
    });
  });
});
