import { ConfigError, loadConfig } from './config';
import { databaseProblem, describeDatabaseUrl, listenProblem } from './startup-errors';

const errno = (code: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(code), { code, ...extra });

describe('start-up failures an operator fixes with a setting', () => {
  it('names a database by host, port and name, never by its password', () => {
    expect(describeDatabaseUrl('postgres://app:s3cret@db.internal:6543/tollgate', { user: true })).toBe(
      'db.internal:6543/tollgate as app',
    );
    expect(describeDatabaseUrl('postgresql://db.internal/tollgate')).toBe('db.internal:5432/tollgate');
    expect(describeDatabaseUrl('db.internal/tollgate')).toBeUndefined();
  });

  it('turns connection refusals into one line naming DATABASE_URL, and leaves other errors alone', () => {
    const url = 'postgres://app:s3cret@db.internal/tollgate';
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', '28P01', '3D000', '42501']) {
      const e = databaseProblem(errno(code), url);
      expect(e).toBeInstanceOf(ConfigError);
      expect(e!.message).toMatch(/DATABASE_URL|TOLLGATE_MIGRATE/);
      expect(e!.message).not.toContain('s3cret');
    }
    expect(databaseProblem(errno('42P01'), url)).toBeUndefined(); // a missing table is a bug, not a setting
  });

  it('names TOLLGATE_DATABASE_DIRECT_URL when PostgreSQL itself, behind the pooler, is out of reach', () => {
    const e = databaseProblem(
      errno('ECONNREFUSED'),
      'postgres://app:s3cret@db-primary:5432/tollgate',
      'TOLLGATE_DATABASE_DIRECT_URL',
    );
    expect(e?.message).toBe(
      'cannot use the database db-primary:5432/tollgate as app: nothing accepts connections there; check TOLLGATE_DATABASE_DIRECT_URL and that PostgreSQL is running',
    );
    expect(databaseProblem(e, 'postgres://app@pgbouncer:6432/tollgate')).toBe(e); // not re-read as DATABASE_URL's
  });

  it('reads only listen failures as port or host problems', () => {
    expect(listenProblem(errno('EADDRINUSE', { syscall: 'listen' }), '0.0.0.0', 8080)?.message).toBe(
      'port 8080 on 0.0.0.0 is in use; set PORT to a free port, or stop what holds it',
    );
    expect(listenProblem(errno('EADDRINUSE', { syscall: 'connect' }), '0.0.0.0', 8080)).toBeUndefined();
  });
});

describe('log settings', () => {
  it("takes Nest's level names and pino's, TOLLGATE_LOG_LEVEL over LOG_LEVEL, and refuses others", () => {
    expect(loadConfig({}).logLevel).toBe('info');
    expect(loadConfig({ LOG_LEVEL: 'log' }).logLevel).toBe('info');
    expect(loadConfig({ LOG_LEVEL: 'VERBOSE' }).logLevel).toBe('trace');
    expect(loadConfig({ LOG_LEVEL: 'warn', TOLLGATE_LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(ConfigError);
  });

  it('takes json or pretty, and leaves the choice to the terminal when unset', () => {
    expect(loadConfig({}).logFormat).toBeUndefined();
    expect(loadConfig({ TOLLGATE_LOG_FORMAT: 'JSON' }).logFormat).toBe('json');
    expect(() => loadConfig({ TOLLGATE_LOG_FORMAT: 'xml' })).toThrow(/TOLLGATE_LOG_FORMAT/);
  });
});
