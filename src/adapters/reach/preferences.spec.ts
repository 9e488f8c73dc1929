import { ValidationError } from '../../domain/shared/domain-error';
import { DEFAULT_PREFERENCES, deliveryFor, mergePreferences, NotificationPreferences, readStored } from './preferences';

const at = (iso: string) => new Date(iso);
const prefs = (over: Partial<NotificationPreferences>): NotificationPreferences => ({
  ...DEFAULT_PREFERENCES,
  ...over,
});

describe('when a message goes out', () => {
  it('immediate: now, unless in quiet hours (which may wrap past midnight): then when they end, in the person’s zone', () => {
    const p = prefs({ timeZone: 'Europe/Berlin', quietHours: { from: '22:00', to: '07:00' } });
    expect(deliveryFor(p, 'email', at('2026-11-28T12:00:00Z'))).toEqual({ kind: 'now' });
    // 23:30 in Berlin (UTC+1 in November): quiet until 07:00 local = 06:00 UTC next day.
    expect(deliveryFor(p, 'email', at('2026-11-28T22:30:00Z'))).toEqual({
      kind: 'digest',
      at: at('2026-11-29T06:00:00Z'),
    });
    // 05:00 local, still quiet: the same morning.
    expect(deliveryFor(p, 'push', at('2026-11-29T04:00:00Z'))).toEqual({
      kind: 'digest',
      at: at('2026-11-29T06:00:00Z'),
    });
    // Quiet hours within one day.
    const lunch = prefs({ quietHours: { from: '12:00', to: '13:00' } });
    expect(deliveryFor(lunch, 'email', at('2026-11-28T12:30:00Z'))).toEqual({
      kind: 'digest',
      at: at('2026-11-28T13:00:00Z'),
    });
    expect(deliveryFor(lunch, 'email', at('2026-11-28T13:00:00Z'))).toEqual({ kind: 'now' });
  });

  it('hourly: the next full hour; daily: the next dailyAt — moved past quiet hours; off: never', () => {
    expect(deliveryFor(prefs({ email: 'hourly' }), 'email', at('2026-11-28T10:20:00Z'))).toEqual({
      kind: 'digest',
      at: at('2026-11-28T11:00:00Z'),
    });
    // Half-hour zones have their own full hours.
    expect(
      deliveryFor(prefs({ email: 'hourly', timeZone: 'Asia/Kolkata' }), 'email', at('2026-11-28T10:20:00Z')),
    ).toEqual({
      kind: 'digest',
      at: at('2026-11-28T10:30:00Z'),
    });
    const daily = prefs({ email: 'daily', dailyAt: '09:00', timeZone: 'America/New_York' });
    expect(deliveryFor(daily, 'email', at('2026-11-28T13:00:00Z'))).toEqual({
      kind: 'digest',
      at: at('2026-11-28T14:00:00Z'),
    });
    expect(deliveryFor(daily, 'email', at('2026-11-28T15:00:00Z'))).toEqual({
      kind: 'digest',
      at: at('2026-11-29T14:00:00Z'),
    });
    const quietDaily = prefs({ email: 'daily', dailyAt: '06:00', quietHours: { from: '22:00', to: '07:30' } });
    expect(deliveryFor(quietDaily, 'email', at('2026-11-28T12:00:00Z'))).toEqual({
      kind: 'digest',
      at: at('2026-11-29T07:30:00Z'),
    });
    expect(deliveryFor(prefs({ slack: 'off' }), 'slack', at('2026-11-28T12:00:00Z'))).toEqual({ kind: 'never' });
  });

  it('keeps local time across a daylight-saving change', () => {
    // Europe/Berlin goes to summer time on 2026-03-29: 09:00 local is 08:00 UTC before, 07:00 UTC after.
    const daily = prefs({ push: 'daily', dailyAt: '09:00', timeZone: 'Europe/Berlin' });
    expect(deliveryFor(daily, 'push', at('2026-03-28T12:00:00Z'))).toEqual({
      kind: 'digest',
      at: at('2026-03-29T07:00:00Z'),
    });
  });
});

describe('settings as a person sends them', () => {
  it('merge over the current ones, field by field', () => {
    const p = mergePreferences(DEFAULT_PREFERENCES, {
      email: 'daily',
      timeZone: 'Europe/Berlin',
      quietHours: { from: '22:00', to: '07:00' },
    });
    expect(p).toEqual({
      ...DEFAULT_PREFERENCES,
      email: 'daily',
      timeZone: 'Europe/Berlin',
      quietHours: { from: '22:00', to: '07:00' },
    });
    expect(mergePreferences(p, { quietHours: null }).quietHours).toBeNull();
  });

  it('refuse what is not a setting, naming each bad field', () => {
    let e: unknown;
    try {
      mergePreferences(DEFAULT_PREFERENCES, {
        email: 'sometimes',
        dailyAt: '25:00',
        timeZone: 'Mars/Olympus',
        quietHours: { from: '22:00', to: '22:00' },
        sms: 'immediate',
      });
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(ValidationError);
    expect((e as ValidationError).faults.map((f) => f.path).sort()).toEqual([
      'dailyAt',
      'email',
      'quietHours',
      'sms',
      'timeZone',
    ]);
    expect(() => mergePreferences(DEFAULT_PREFERENCES, [])).toThrow(ValidationError);
    expect(() =>
      mergePreferences(DEFAULT_PREFERENCES, { quietHours: { from: '22:00', to: '07:00', extra: 1 } }),
    ).toThrow(ValidationError);
  });

  it('read back damaged stored settings as the defaults', () => {
    expect(readStored({ email: 'never-heard-of' })).toEqual(DEFAULT_PREFERENCES);
    expect(readStored(null)).toEqual(DEFAULT_PREFERENCES);
  });
});
