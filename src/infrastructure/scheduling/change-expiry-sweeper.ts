import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ExpireChangesCommand } from '../../application/commands/changes/change.commands';
import { TOLLGATE_CONFIG, TollgateConfig } from '../config/config';
import { PeriodicCommand } from './periodic-command';

/**
 * Records ChangeExpired for pending changes of the control plane past their deadline, every `sweepIntervalMs`.
 * Safe on many instances: each change is expired under its row lock, once.
 */
@Injectable()
export class ChangeExpirySweeper extends PeriodicCommand {
  constructor(commands: CommandBus, @Inject(TOLLGATE_CONFIG) config: TollgateConfig) {
    super(commands, config, 'ChangeExpirySweeper', () => new ExpireChangesCommand());
  }
}
