import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DomainError } from '../../../domain/shared/domain-error';
import { TOOLS, ToolRepository } from '../../ports';
import { toolView } from '../../views/views';
import { GetToolQuery } from './get-tool.query';

@QueryHandler(GetToolQuery)
export class GetToolHandler implements IQueryHandler<GetToolQuery> {
  constructor(@Inject(TOOLS) private readonly tools: ToolRepository) {}
  async execute({ tenantId, name }: GetToolQuery) {
    const tool = await this.tools.find(tenantId, name);
    if (!tool) throw new DomainError('not_found', 'not_found', `Tool ${name} is not registered`);
    return toolView(tool);
  }
}
