/* What the policy sees of a proposed call and of the tool it names. */

/** The three flags a tool (or a proposal's `annotations`) may carry. */
export interface ToolFlags {
  isReadOnly?: boolean;
  requiresApproval?: boolean;
  destructive?: boolean;
}

/** What the policy may look at in one proposed call. */
export interface ProposedCallFacts {
  toolName: string;
  arguments: Record<string, unknown>;
  annotations?: ToolFlags;
  confidence?: number;
  estimatedCost?: number;
}
