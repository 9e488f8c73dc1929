import { Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { TollgateConfig } from '../config/config';

/**
 * Runs a command every `sweepIntervalMs` (the sweepers: expiry, escalation, questions), one run at a time per
 * instance; a failed run is logged and the next one tries again. Safe on many instances because each command
 * takes its rows under lock (or skips those another instance holds). Stopped and awaited at shutdown.
 */
export abstract class PeriodicCommand implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private readonly log: Logger;

  protected constructor(
    private readonly commands: CommandBus,
    private readonly config: TollgateConfig,
    name: string,
    private readonly command: () => object,
  ) {
    this.log = new Logger(name);
  }

  onApplicationBootstrap(): void {
    if (this.config.sweepIntervalMs > 0)
      this.timer = setInterval(() => void this.tick(), this.config.sweepIntervalMs).unref();
  }

  async tick(): Promise<void> {
    if (this.running) return; // one sweep at a time per instance
    this.running = this.commands
      .execute(this.command())
      .catch((e) => this.log.warn(`sweep failed: ${(e as Error).message}`))
      .finally(() => (this.running = undefined));
    await this.running;
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
