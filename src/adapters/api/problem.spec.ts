import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable, toProblem } from './problem';

/** A PostgreSQL error as pg raises it, wrapped by TypeORM as a query failure. */
function pgError(code: string, message = 'refused'): QueryFailedError {
  return new QueryFailedError('SELECT 1', [], Object.assign(new Error(message), { code }));
}

describe('a database that refuses the service fails closed with 503 and Retry-After', () => {
  it.each([
    ['08006', 'connection failure'],
    ['28P01', 'password authentication failed'],
    ['3D000', 'database does not exist'],
    ['53300', 'too many connections'],
    ['53100', 'disk full'],
    ['55000', 'database is not currently accepting connections'],
    ['57P01', 'terminating connection due to administrator command'],
    ['57P02', 'crash shutdown'],
    ['57P03', 'the database system is starting up'],
  ])('SQLSTATE %s (%s)', (code, message) => {
    expect(isDatabaseUnavailable(pgError(code, message))).toBe(true);
    expect(toProblem(pgError(code, message))).toMatchObject({
      status: 503,
      code: 'unavailable',
      retryAfter: expect.any(Number),
    });
  });

  it.each([
    ['23505', 'duplicate key'],
    ['40001', 'serialization failure'],
    ['42P01', 'relation does not exist'],
  ])('but SQLSTATE %s (%s) is not the database being away', (code, message) => {
    expect(isDatabaseUnavailable(pgError(code, message))).toBe(false);
  });

  it('bad data the database cannot store is the client’s 400, not a 503', () => {
    expect(toProblem(pgError('22021', 'invalid byte sequence'))).toMatchObject({
      status: 400,
      code: 'validation_failed',
    });
  });
});
