/* What a tool says of itself: a description and the three flags the ApprovalPolicy reads. */

export interface ToolDefinition {
  description?: string;
  isReadOnly: boolean;
  requiresApproval: boolean;
  destructive: boolean;
  /** The JSON Schema of the tool's input, for review: forms and edit checks (checked valid when registered). */
  inputSchema?: { [key: string]: unknown };
  /** Argument names whose values are secret (domain/shared/redaction): masked wherever the call is shown or recorded. */
  redact?: string[];
}
