import { Principal } from '../../../domain/shared/actor';
import { ToolDefinition } from '../../../domain/tool/tool.aggregate';

export class RegisterToolCommand {
  constructor(
    readonly principal: Principal,
    readonly name: string,
    readonly definition: ToolDefinition,
  ) {}
}
