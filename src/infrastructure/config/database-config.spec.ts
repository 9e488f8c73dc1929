import { loadConfig } from './config';

describe('TOLLGATE_DATABASE_PREPARED_STATEMENTS', () => {
  it('is on unless turned off, for poolers in transaction mode that cannot carry named statements', () => {
    expect(loadConfig({}).preparedStatements).toBe(true);
    expect(loadConfig({ TOLLGATE_DATABASE_PREPARED_STATEMENTS: 'on' }).preparedStatements).toBe(true);
    expect(loadConfig({ TOLLGATE_DATABASE_PREPARED_STATEMENTS: ' OFF ' }).preparedStatements).toBe(false);
    expect(loadConfig({ TOLLGATE_DATABASE_PREPARED_STATEMENTS: 'false' }).preparedStatements).toBe(false);
  });

  it('refuses anything else, naming the setting', () => {
    expect(() => loadConfig({ TOLLGATE_DATABASE_PREPARED_STATEMENTS: 'maybe' })).toThrow(
      /^TOLLGATE_DATABASE_PREPARED_STATEMENTS must be on or off, got "maybe"$/,
    );
  });
});

describe('TOLLGATE_DATABASE_DIRECT_URL', () => {
  const pooler = 'postgres://tollgate:secret@pgbouncer:6432/tollgate';
  const direct = 'postgres://tollgate:secret@db-primary:5432/tollgate';

  it('defaults to DATABASE_URL, so one URL is enough without a pooler', () => {
    expect(loadConfig({ DATABASE_URL: pooler }).databaseDirectUrl).toBe(pooler);
    expect(loadConfig({ DATABASE_URL: pooler, TOLLGATE_DATABASE_DIRECT_URL: ' ' }).databaseDirectUrl).toBe(pooler);
  });

  it('names PostgreSQL itself for LISTEN and migrations when DATABASE_URL points at a pooler', () => {
    const config = loadConfig({ DATABASE_URL: pooler, TOLLGATE_DATABASE_DIRECT_URL: direct });
    expect(config.databaseUrl).toBe(pooler);
    expect(config.databaseDirectUrl).toBe(direct);
    expect(
      loadConfig({ DATABASE_URL: pooler, TOLLGATE_DATABASE_DIRECT_URL: 'postgresql://db-primary/tollgate' })
        .databaseDirectUrl,
    ).toBe('postgresql://db-primary/tollgate');
  });

  it('is unset in embedded mode', () => {
    expect(loadConfig({}).databaseDirectUrl).toBeUndefined();
  });

  it('refuses a direct URL without DATABASE_URL, and one that is not a postgres URL, naming the setting', () => {
    expect(() => loadConfig({ TOLLGATE_DATABASE_DIRECT_URL: direct })).toThrow(
      /^TOLLGATE_DATABASE_DIRECT_URL is set but DATABASE_URL is not/,
    );
    expect(() => loadConfig({ DATABASE_URL: pooler, TOLLGATE_DATABASE_DIRECT_URL: 'db-primary:5432' })).toThrow(
      /^TOLLGATE_DATABASE_DIRECT_URL is not a URL such as postgres:\/\//,
    );
    expect(() => loadConfig({ DATABASE_URL: pooler, TOLLGATE_DATABASE_DIRECT_URL: 'http://db-primary/' })).toThrow(
      /^TOLLGATE_DATABASE_DIRECT_URL is not a URL/,
    );
  });
});
