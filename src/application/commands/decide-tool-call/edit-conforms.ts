import type { ToolCall } from '../../../domain/conversation/tool-call.entity';
import type { DecisionInput } from '../../../domain/conversation/tool-call.entity';
import { DomainError } from '../../../domain/shared/domain-error';
import type { ToolRepository } from '../../ports';
import type { InputSchemas } from '../../ports/input-schema.port';

/**
 * A person's edit of a pending call must conform to the input schema its tool registered (the schema at the time
 * of the decision): otherwise 400 `arguments_invalid`, listing each fault as a JSON pointer into the arguments.
 * Only edits are checked: proposals are not refused for their schema (agents propose; the schema is for review).
 */
export async function mustConformToInputSchema(
  tenant: string,
  call: ToolCall,
  input: Pick<DecisionInput, 'decision' | 'arguments'>,
  tools: ToolRepository | undefined,
  schemas: InputSchemas | undefined,
): Promise<void> {
  if (input.arguments === undefined || input.decision === 'reject' || call.status !== 'pending') return;
  if (!tools || !schemas) return;
  const schema = (await tools.find(tenant, call.toolName))?.snapshot().inputSchema;
  if (!schema) return;
  const errors = schemas.check(schema, input.arguments);
  if (errors.length === 0) return;
  throw new DomainError(
    'arguments_invalid',
    'invalid',
    `The edited arguments do not conform to ${call.toolName}'s input schema: ${errors
      .slice(0, 5)
      .map((e) => `${e.path || '/'} ${e.message}`)
      .join('; ')}`,
    { errors },
  );
}
