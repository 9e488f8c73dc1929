import type { ProposedCallFacts, RuleUsage } from '../../../domain/policy/call-facts';
import type { PolicyDocument } from '../../../domain/policy/policy-document';
import type { SupervisionLevel } from '../../../domain/policy/supervision-level';
import type { CallUsageReader, UsageScope, UsageWindow } from '../../ports/call-usage.port';

interface Tally {
  window: UsageWindow;
  matchesTool: (name: string) => boolean;
  calls: number;
  cost: number;
}

/**
 * The counts behind the velocity and budget triggers (`when.rateAbove`, `when.costAbove`) of the rules a proposal's
 * tools meet, shadow rules included: read once per proposal, then carried through its calls, so the tenth call of a
 * batch counts the nine before it.
 */
export class TriggerUsage {
  private constructor(
    private readonly tallies: Tally[],
    /** Rule index → its rate window's tally and its cost window's. */
    private readonly rules: Map<number, { rate?: Tally; cost?: Tally }>,
  ) {}

  /** Undefined when no rule for these tools counts anything: the proposal reads nothing more. */
  static async read(
    policy: PolicyDocument,
    toolNames: readonly string[],
    reader: CallUsageReader | undefined,
    tenantId: string,
    scope: UsageScope,
    now: Date,
  ): Promise<TriggerUsage | undefined> {
    const all = policy.withShadowRulesLive();
    const counted = new Set<number>();
    for (const name of toolNames)
      for (const i of all.rulesForTool(name))
        if (all.rules[i].when?.rateAbove || all.rules[i].when?.costAbove) counted.add(i);
    // No reader (a test's handler): no counts, so every trigger is taken as crossed (see RuleUsage).
    if (counted.size === 0 || !reader) return undefined;

    const tallies = new Map<string, Tally>();
    const rules = new Map<number, { rate?: Tally; cost?: Tally }>();
    const tallyOf = (i: number, by: UsageWindow['by'], per: number) => {
      const pattern = all.patterns[i];
      const window = { toolGlob: pattern.toolGlob, by, per };
      const key = JSON.stringify(window);
      let t = tallies.get(key);
      if (!t) tallies.set(key, (t = { window, matchesTool: (n) => pattern.matchesTool(n), calls: 0, cost: 0 }));
      return t;
    };
    for (const i of [...counted].sort((a, b) => a - b)) {
      const { rateAbove, costAbove } = all.rules[i].when!;
      rules.set(i, {
        ...(rateAbove && { rate: tallyOf(i, rateAbove.by, rateAbove.per) }),
        ...(costAbove && { cost: tallyOf(i, costAbove.by, costAbove.per) }),
      });
    }
    const list = [...tallies.values()];
    const read = await reader.usage(
      tenantId,
      scope,
      list.map((t) => t.window),
      now,
    );
    list.forEach((t, k) => {
      t.calls = read[k].calls;
      t.cost = read[k].cost;
    });
    return new TriggerUsage(list, rules);
  }

  /** What came before the next call, by rule index (the facts' `usage`). */
  current(): ReadonlyMap<number, RuleUsage> {
    const out = new Map<number, RuleUsage>();
    for (const [i, { rate, cost }] of this.rules)
      out.set(i, { ...(rate && { calls: rate.calls }), ...(cost && { cost: cost.cost }) });
    return out;
  }

  /** Counts a call of this proposal as judged: every proposal is a call; a refused one costs nothing. */
  add(call: ProposedCallFacts, level: SupervisionLevel): void {
    for (const t of this.tallies) {
      if (!t.matchesTool(call.toolName)) continue;
      t.calls += 1;
      if (level !== 'deny') t.cost += call.estimatedCost ?? 0;
    }
  }
}
