import { loadConfig } from './config';

describe('TOLLGATE_DATABASE_PREPARED_STATEMENTS', () => {
  it('is on unless turned off, for poolers in transaction mode that cannot carry named statements', () => {
    expect(loadConfig({}).preparedStatements).toBe(true);
    expect(loadConfig({ TOLLGATE_DATABASE_PREPARED_STATEMENTS: 'on' }).preparedStatements).toBe(true);
    expect(loadConfig({ TOLLGATE_DATABASE_PREPARED_STATEMENTS: ' OFF ' }).preparedStatements).toBe(false);
    expect(loadConfig({ TOLLGATE_DATABASE_PREPARED_STATEMENTS: 'false' }).preparedStatements).toBe(false);
  });

  it('refuses anything else, naming the setting', () => {
    expect(() => loadConfig({ TOLLGATE_DATABASE_PREPARED_STATEMENTS: 'maybe' })).toThrow(/^TOLLGATE_DATABASE_PREPARED_STATEMENTS must be on or off, got "maybe"$/);
  });
});
