import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Client, Notification } from 'pg';
import { TOLLGATE_CONFIG, TollgateConfig } from '../config/config';
import { InProcessWaiters } from './in-process-waiters';

/** The channel decisions and expiries are announced on; the payload is `<tenant> <toolCallId>`, ids only. */
export const WAKE_CHANNEL = 'tollgate_tool_calls';

const MAX_BACKOFF_MS = 5_000;

export function wakePayload(tenantId: string, toolCallId: string): string {
  return `${tenantId} ${toolCallId}`;
}

/**
 * One LISTEN connection per instance serves all its long-polls: a decision or expiry committed on any
 * instance wakes the waiters here. The NOTIFY is sent inside the deciding transaction, so it arrives only
 * if the change committed. After a reconnect every local waiter is woken to re-read what it may have
 * missed; waiters also re-read on a timer, so a lost notification costs latency, never correctness.
 * PostgreSQL only: through pglite-socket NOTIFY does not cross connections, and embedded mode is one instance.
 *
 * LISTEN is session state: through a pooler in transaction mode (PgBouncer) the LISTEN would land on whichever
 * server connection ran it and the notifications would never come back. So this connection goes to PostgreSQL
 * itself, TOLLGATE_DATABASE_DIRECT_URL (DATABASE_URL unless set). The NOTIFYs are sent inside the writing
 * transactions, which may go through the pooler: they are delivered on commit like any other.
 */
@Injectable()
export class PgWakeListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private client?: Client;
  private stopped = false;
  private backoffMs = 100;
  private reconnectTimer?: NodeJS.Timeout;
  private readonly log = new Logger('WakeListener');
  /** Connected and listening (for tests and health). */
  listening = false;

  constructor(
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
    private readonly waiters: InProcessWaiters,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.databaseUrl) return;
    await this.connect().catch(() => this.scheduleReconnect());
  }

  private async connect(): Promise<void> {
    const client = new Client({
      connectionString: this.config.databaseDirectUrl ?? this.config.databaseUrl,
      application_name: `tollgate-listen-${this.config.instanceId}`.slice(0, 63),
    });
    client.on('notification', (n: Notification) => this.onNotification(n));
    client.on('error', (e) => this.lost(client, e));
    client.on('end', () => this.lost(client));
    await client.connect();
    await client.query(`LISTEN ${WAKE_CHANNEL}`);
    if (this.stopped) return void client.end().catch(() => undefined);
    const reconnected = this.client !== undefined;
    this.client = client;
    this.listening = true;
    this.backoffMs = 100;
    if (reconnected) {
      this.log.log('listening again; waking every waiter to re-read');
      this.waiters.wakeAll();
    }
  }

  private onNotification(n: Notification): void {
    if (n.channel !== WAKE_CHANNEL || !n.payload) return;
    const space = n.payload.indexOf(' ');
    if (space > 0) this.waiters.wake(n.payload.slice(0, space), n.payload.slice(space + 1));
  }

  private lost(client: Client, e?: Error): void {
    if (client !== this.client || this.stopped) return;
    this.listening = false;
    this.log.warn(`LISTEN connection lost${e ? `: ${e.message}` : ''}; reconnecting`);
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect().catch(() => this.scheduleReconnect());
    }, this.backoffMs);
    this.reconnectTimer.unref();
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    this.listening = false;
    await this.client?.end().catch(() => undefined);
  }
}
