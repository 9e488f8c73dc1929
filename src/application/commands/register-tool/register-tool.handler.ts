import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Tool } from '../../../domain/tool/tool.aggregate';
import { isAgent } from '../../../domain/shared/actor';
import { CLOCK, Clock, TOOLS, ToolRepository, UNIT_OF_WORK, UnitOfWork } from '../../ports';
import { toolView } from '../../views/views';
import { RegisterToolCommand } from './register-tool.command';

@CommandHandler(RegisterToolCommand)
export class RegisterToolHandler implements ICommandHandler<RegisterToolCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(TOOLS) private readonly tools: ToolRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ principal: p, name, definition }: RegisterToolCommand) {
    return this.uow.run(async () => {
      const existing = await this.tools.find(p.tenant, name, { lock: true });
      // An agent token stays an agent whatever its other roles: only a person registers as admin.
      const asAdmin = !isAgent(p) && p.roles.includes('admin');
      const by = {
        id: p.id,
        kind: asAdmin ? ('person' as const) : ('agent' as const),
        via: p.via ?? 'api',
        name: p.name,
        roles: p.roles,
      };
      const tool = Tool.register(existing, {
        tenantId: p.tenant,
        name,
        def: definition,
        by,
        asAdmin,
        at: this.clock.now(),
      });
      const created = !existing;
      await this.tools.save(tool);
      return { tool: toolView(tool), created };
    });
  }
}
