/** Types of bench/lib/pgbouncer.js, for the TypeScript tests that start a PgBouncer of their own. */
import type { ChildProcess } from 'node:child_process';

export interface RunningPgbouncer {
  name: string;
  child: ChildProcess;
  /** The same database and user as `serverUrl`, through the pooler. */
  url: string;
  /** PgBouncer's admin console (`SHOW STATS`, `SHOW CONFIG`), when started with `adminConsole`. */
  adminUrl: string;
  port: number;
  pid: number;
  dir: string;
  version: string;
  output(): string;
  stop(): Promise<void>;
}

export declare const INSTALL_HINT: string;
export declare function findPgbouncer(): string | undefined;
export declare function startPgbouncer(o: {
  serverUrl: string;
  poolSize?: number;
  maxClientConn?: number;
  adminConsole?: boolean;
  timeoutMs?: number;
}): Promise<RunningPgbouncer>;
