import type {
  Server,
  ServerUnaryCall,
  ServerWritableStream,
  sendUnaryData,
  UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { HealthImplementation, ServingStatus, protoPath } from 'grpc-health-check';
import type { DataSource } from 'typeorm';
import { databaseReadiness } from '../../infrastructure/database/readiness';

/** While someone watches, readiness is looked at this often, so a watcher hears of a database going away. */
const WATCH_INTERVAL_MS = 5000;

export const HEALTH_PROTO = protoPath;

/**
 * grpc.health.v1.Health for the overall server ("") and tollgate.v1.Tollgate. Serving follows readiness, as
 * GET /health/ready does: SERVING while the database answers and every migration is applied, NOT_SERVING
 * otherwise and from the moment the server starts shutting down. Check looks at once; Watch is told of
 * changes, looked at every 5 s while anyone watches; List answers what was seen last.
 */
export class GrpcHealth {
  private readonly impl: HealthImplementation;
  private readonly watches = new Set<ServerWritableStream<unknown, unknown>>();
  private timer?: NodeJS.Timeout;
  private checking?: Promise<ServingStatus>;
  private closing = false;
  /** What watchers were last told (the initial NOT_SERVING until the first look). */
  private status: ServingStatus = 'NOT_SERVING';

  constructor(
    private readonly dataSource: DataSource,
    private readonly services: string[],
  ) {
    this.impl = new HealthImplementation(Object.fromEntries(['', ...services].map((s) => [s, 'NOT_SERVING' as const])));
  }

  addToServer(server: Pick<Server, 'addService'>): void {
    this.impl.addToServer({
      addService: (service, handlers: UntypedServiceImplementation) =>
        server.addService(service, {
          ...handlers,
          check: (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
            void this.refresh().then(() =>
              (handlers.check as (c: typeof call, cb: typeof callback) => void)(call, callback),
            );
          },
          watch: (call: ServerWritableStream<unknown, unknown>) => {
            this.watches.add(call);
            call.once('cancelled', () => this.unwatch(call));
            void this.refresh().then(() => {
              if (this.closing) return this.unwatch(call, true);
              this.timer ??= setInterval(() => void this.refresh(), WATCH_INTERVAL_MS).unref();
              (handlers.watch as (c: typeof call) => void)(call);
            });
          },
        }),
    });
  }

  /** Readiness looked at now (one look at a time, shared by whoever asks meanwhile), told to watchers on change. */
  refresh(): Promise<ServingStatus> {
    return (this.checking ??= this.ready()
      .then((status) => {
        if (!this.closing && status !== this.status) {
          this.status = status;
          for (const s of ['', ...this.services]) this.impl.setStatus(s, status);
        }
        return status;
      })
      .finally(() => (this.checking = undefined)));
  }

  /** From now on NOT_SERVING; every watch is told and ended, so the server's shutdown does not wait for them. */
  close(): void {
    this.closing = true;
    for (const s of ['', ...this.services]) this.impl.setStatus(s, 'NOT_SERVING');
    for (const call of [...this.watches]) this.unwatch(call, true);
  }

  private unwatch(call: ServerWritableStream<unknown, unknown>, end = false): void {
    this.watches.delete(call);
    if (end) call.end();
    if (this.watches.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private async ready(): Promise<ServingStatus> {
    if (this.closing) return 'NOT_SERVING';
    return (await databaseReadiness(this.dataSource)).ready ? 'SERVING' : 'NOT_SERVING';
  }
}
