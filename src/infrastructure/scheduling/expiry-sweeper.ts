import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ExpireToolCallsCommand } from '../../application/commands/expire-tool-calls/expire-tool-calls.command';
import { TOLLGATE_CONFIG, TollgateConfig } from '../config/config';
import { PeriodicCommand } from './periodic-command';

/**
 * Expires pending calls whose time is up, and takes the escalation steps and reminders that are due, every
 * `sweepIntervalMs`. Safe on many instances: each conversation is handled under its row lock, so two sweepers
 * never expire one call, or take one step, twice.
 */
@Injectable()
export class ExpirySweeper extends PeriodicCommand {
  constructor(commands: CommandBus, @Inject(TOLLGATE_CONFIG) config: TollgateConfig) {
    super(commands, config, 'ExpirySweeper', () => new ExpireToolCallsCommand());
  }
}
