import { AggregateRoot } from '../shared/aggregate-root';
import { Actor } from '../shared/actor';
import type { ToolDefinition } from './tool-definition';
import { ToolRegistered } from './tool.events';
import { AdminToolProtectedError } from './tool.errors';
import { jsonEqual } from '../shared/json';
import { MAX_REDACTIONS, redactionFault } from '../shared/redaction';
import { ValidationError, ValidationFault } from '../shared/domain-error';

export type { ToolDefinition } from './tool-definition';

export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

export interface ToolState extends ToolDefinition {
  tenantId: string;
  name: string;
  registeredBy: { id: string; kind: 'admin' | 'agent' };
  createdAt: Date;
  updatedAt: Date;
  version: number;
}

/** A tool in a tenant's registry. Its flags feed the ApprovalPolicy. */
export class Tool extends AggregateRoot {
  private constructor(
    private s: Omit<ToolState, 'version'>,
    version: number,
  ) {
    super(s.tenantId, version);
  }

  static rehydrate(state: ToolState): Tool {
    const { version, ...rest } = state;
    return new Tool(rest, version);
  }

  /** Registers a new tool, or updates an existing one (`existing`), as `by`. */
  static register(
    existing: Tool | null,
    input: { tenantId: string; name: string; def: ToolDefinition; by: Actor; asAdmin: boolean; at: Date },
  ): Tool {
    if (existing && existing.s.registeredBy.kind === 'admin' && !input.asAdmin)
      throw new AdminToolProtectedError(input.name);
    // An agent may name more secrets but never fewer: unmasking another agent's secrets needs an admin.
    if (!input.asAdmin && existing?.s.redact?.length)
      input = {
        ...input,
        def: { ...input.def, redact: [...new Set([...existing.s.redact, ...(input.def.redact ?? [])])] },
      };
    mustBeRedactList(input.def.redact);
    const kind = input.asAdmin ? 'admin' : 'agent';
    const tool =
      existing ??
      new Tool(
        {
          tenantId: input.tenantId,
          name: input.name,
          ...input.def,
          registeredBy: { id: input.by.id, kind },
          createdAt: input.at,
          updatedAt: input.at,
        },
        0,
      );
    if (existing && sameDefinition(existing.s, input.def) && existing.s.registeredBy.kind === kind) return existing;
    tool.s = { ...tool.s, ...input.def, registeredBy: { id: input.by.id, kind }, updatedAt: input.at };
    tool.record(
      new ToolRegistered(
        { tenantId: input.tenantId, at: input.at, actor: input.by, toolName: input.name },
        { ...input.def, registeredBy: input.by.id, kind, created: !existing },
      ),
    );
    return tool;
  }

  get name(): string {
    return this.s.name;
  }
  get isNew(): boolean {
    return this.version === 0;
  }
  snapshot(): Readonly<Omit<ToolState, 'version'>> {
    return this.s;
  }
}

function sameDefinition(a: ToolDefinition, b: ToolDefinition): boolean {
  return (
    (a.description ?? null) === (b.description ?? null) &&
    a.isReadOnly === b.isReadOnly &&
    a.requiresApproval === b.requiresApproval &&
    a.destructive === b.destructive &&
    jsonEqual(a.inputSchema ?? null, b.inputSchema ?? null) &&
    jsonEqual(a.redact ?? [], b.redact ?? [])
  );
}

/** `redact`: at most MAX_REDACTIONS names, each a usable path or key glob (domain/shared/redaction). */
function mustBeRedactList(redact: readonly unknown[] | undefined): void {
  if (redact === undefined) return;
  const faults: ValidationFault[] =
    redact.length > MAX_REDACTIONS
      ? [{ path: 'redact', message: `must name at most ${MAX_REDACTIONS} arguments` }]
      : redact.flatMap((entry, i) => {
          const why = redactionFault(entry);
          return why ? [{ path: `redact[${i}]`, message: why }] : [];
        });
  if (faults.length > 0) throw new ValidationError(faults);
}
