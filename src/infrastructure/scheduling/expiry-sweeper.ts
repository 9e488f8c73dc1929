import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ExpireToolCallsCommand } from '../../application/commands/expire-tool-calls/expire-tool-calls.command';
import { TOLLGATE_CONFIG, TollgateConfig } from '../config/config';

/**
 * Expires pending calls whose time is up, every `sweepIntervalMs`. Safe on many instances:
 * each conversation is expired under its row lock, so two sweepers never expire one call twice.
 */
@Injectable()
export class ExpirySweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private readonly log = new Logger('ExpirySweeper');

  constructor(private readonly commands: CommandBus, @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig) {}

  onApplicationBootstrap(): void {
    if (this.config.sweepIntervalMs > 0) this.timer = setInterval(() => void this.tick(), this.config.sweepIntervalMs).unref();
  }

  async tick(): Promise<void> {
    if (this.running) return; // one sweep at a time per instance
    this.running = this.commands
      .execute(new ExpireToolCallsCommand())
      .catch((e) => this.log.warn(`sweep failed: ${(e as Error).message}`))
      .finally(() => (this.running = undefined));
    await this.running;
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
