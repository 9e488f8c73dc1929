/* What a tool says of itself: a description and the three flags the ApprovalPolicy reads. */

export interface ToolDefinition {
  description?: string;
  isReadOnly: boolean;
  requiresApproval: boolean;
  destructive: boolean;
}
