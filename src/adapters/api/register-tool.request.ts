import { RegisterToolCommand } from '../../application/commands/register-tool/register-tool.command';
import type { Principal } from '../../domain/shared/actor';
import { ValidationError } from '../../domain/shared/domain-error';
import { TOOL_NAME_PATTERN } from '../../domain/tool/tool.aggregate';
import { RegisterToolRequest } from './dto/tool.dto';
import { parseBody } from './validation';
import { checkInputSchema } from '../../infrastructure/schemas/input-schemas';

/** PUT /v1/tools/{name}, Tollgate.RegisterTool: the name, then the body; a flag not given is false. */
export function registerTool(p: Principal, name: string, body: () => unknown): RegisterToolCommand {
  if (!TOOL_NAME_PATTERN.test(name))
    throw new ValidationError([{ path: 'name', message: 'must match ^[A-Za-z0-9_.:-]{1,128}$' }]);
  const dto = parseBody(RegisterToolRequest, body() ?? {});
  return new RegisterToolCommand(p, name, {
    description: dto.description,
    isReadOnly: dto.isReadOnly ?? false,
    requiresApproval: dto.requiresApproval ?? false,
    destructive: dto.destructive ?? false,
    ...(dto.redact !== undefined ? { redact: dto.redact } : {}),
    inputSchema: dto.inputSchema === undefined ? undefined : checkInputSchema(dto.inputSchema),
  });
}
