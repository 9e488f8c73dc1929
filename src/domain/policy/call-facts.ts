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
  /**
   * For each rule (by index) whose `when` counts earlier calls: the calls before this one within its `rateAbove`
   * window and scope, and their `estimatedCost` summed within its `costAbove` window and scope. A rule the map
   * leaves out, or a count it lacks, is taken as crossed: a hold, not a call let through on a count not made.
   */
  usage?: ReadonlyMap<number, RuleUsage>;
  /**
   * False when the arguments hold secrets (masked where the call is recorded): reasons then name the argument a
   * shell part came from, never the part's text, which could carry the secret into every channel and the trail.
   */
  quoteArguments?: false;
}

/** What came before a call, as one rule's triggers count it. */
export interface RuleUsage {
  calls?: number;
  cost?: number;
}
