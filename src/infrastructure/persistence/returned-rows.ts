/** TypeORM answers UPDATE and DELETE … RETURNING on PostgreSQL as `[rows, count]`, INSERT … RETURNING as the rows. */
export function returnedRows<T>(result: unknown): T[] {
  return (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as T[];
}
