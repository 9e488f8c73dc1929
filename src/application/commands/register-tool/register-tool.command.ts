import { Principal } from '../../../domain/shared/actor';
import { ToolDefinition } from '../../../domain/tool/tool-definition';
import { Command } from '@nestjs/cqrs';
import type { toolView } from '../../views/views';

export class RegisterToolCommand extends Command<{ tool: ReturnType<typeof toolView>; created: boolean }> {
  constructor(
    readonly principal: Principal,
    readonly name: string,
    readonly definition: ToolDefinition,
  ) {
    super();
  }
}
