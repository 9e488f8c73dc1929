import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ExpireQuestionsCommand } from '../../application/commands/questions/question.commands';
import { TOLLGATE_CONFIG, TollgateConfig } from '../config/config';
import { PeriodicCommand } from './periodic-command';

/**
 * Expires pending questions whose time is up, every `sweepIntervalMs` (as ExpirySweeper does for tool calls).
 * Safe on many instances: each question is expired under its row lock, and a sweeper skips one another holds.
 */
@Injectable()
export class QuestionExpirySweeper extends PeriodicCommand {
  constructor(commands: CommandBus, @Inject(TOLLGATE_CONFIG) config: TollgateConfig) {
    super(commands, config, 'QuestionExpirySweeper', () => new ExpireQuestionsCommand());
  }
}
