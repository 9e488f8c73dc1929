import { ValidationError, ValidationFault } from '../shared/domain-error';
import { jsonEqual } from '../shared/json';
import { readDefaults, readRules } from './policy-document.read';
import { deepFreeze, ReadContext, readObject } from './policy-fields.read';
import { readGovernance } from './policy-rule-extras.read';
import {
  BUILT_IN_DEFAULTS,
  DEFAULT_SHELL_TOOLS,
  PolicyDefaults,
  PolicyDocumentJson,
  PolicyGovernance,
  PolicyRule,
} from './policy-shape';
import { ToolPattern } from './tool-pattern';

// The document's shape and bounds have a file of their own; most code imports them from here.
export * from './policy-shape';

/** Tool names whose candidate rules are remembered; the memo starts afresh when full. */
const TOOL_MEMO_SIZE = 1024;

interface TrieNode {
  next: Map<string, TrieNode>;
  /** Rules whose literal head ends at this node. */
  rules: number[];
}

/**
 * Rules by the literal text their tool glob starts with: exact names in a map, heads in a character
 * trie. A name's candidates are the rules along its path, so a lookup costs the name's length, not the
 * number of rules; only rules that start with a wildcard are tried on every name.
 */
class ToolNameIndex {
  private readonly exact = new Map<string, number[]>();
  private readonly root: TrieNode = { next: new Map(), rules: [] };

  constructor(patterns: readonly ToolPattern[]) {
    patterns.forEach((p, i) => {
      if (p.toolIsExact) {
        const list = this.exact.get(p.toolHead) ?? [];
        list.push(i);
        this.exact.set(p.toolHead, list);
        return;
      }
      let node = this.root;
      for (const ch of p.toolHead) {
        let child = node.next.get(ch);
        if (!child) node.next.set(ch, (child = { next: new Map(), rules: [] }));
        node = child;
      }
      node.rules.push(i);
    });
  }

  /** Rule indices, ascending, that may accept `name` (each still has to be tested). */
  candidates(name: string): number[] {
    const out = [...this.root.rules, ...(this.exact.get(name) ?? [])];
    let node: TrieNode | undefined = this.root;
    for (const ch of name) {
      node = node.next.get(ch);
      if (!node) break;
      for (const i of node.rules) out.push(i);
    }
    return out.sort((a, b) => a - b);
  }
}

/**
 * A tenant's policy document (CONTRACT §5), validated and normalised once: `defaults` has every
 * field, rules omit what was left out, and each rule's `match` is compiled (`patterns[i]`).
 */
export class PolicyDocument {
  private readonly candidates = new Map<string, readonly number[]>();
  private readonly index: ToolNameIndex;
  private readonly shellGlobs: readonly ToolPattern[];
  private readonly shellMemo = new Map<string, boolean>();
  private readonly redactMemo = new Map<string, readonly string[]>();
  /** The same rules with the shadow ones deciding too: what the policy would do were they enforced (memoised). */
  private shadowsLive?: PolicyDocument;
  /** Whether any rule is in shadow mode (then `rulesForTool` leaves them out). */
  readonly hasShadowRules: boolean;

  private constructor(
    private readonly doc: PolicyDocumentJson,
    /** The compiled `match` of each rule, by rule index. */
    readonly patterns: readonly ToolPattern[],
    /** True for the view in which shadow rules decide too (`withShadowRulesLive`). */
    private readonly shadowsDecide = false,
  ) {
    this.index = new ToolNameIndex(patterns);
    this.hasShadowRules = doc.rules.some((r) => r.mode === 'shadow');
    this.shellGlobs = (doc.defaults.shellTools ?? DEFAULT_SHELL_TOOLS).map((glob) => ToolPattern.parse(glob));
  }

  /** A new document (PUT, the policy file). Throws ValidationError naming the path of every fault, e.g. `rules[2].level`. */
  static parse(raw: unknown): PolicyDocument {
    return PolicyDocument.read(raw, true);
  }

  /**
   * A document stored by an earlier version: checks added since (approver names, pattern bounds) are not
   * applied again, so a tenant's current policy always loads. Deciding stays safe without them: auditors and
   * agents never decide, whatever a stored policy lists, and matching is linear however long a pattern is.
   */
  static restore(raw: unknown): PolicyDocument {
    return PolicyDocument.read(raw, false);
  }

  private static read(raw: unknown, strict: boolean): PolicyDocument {
    const faults: ValidationFault[] = [];
    const ctx: ReadContext = { faults, strict };
    const top = readObject(raw, '', ['defaults', 'rules', 'governance'], faults);
    if (!top) throw new ValidationError(faults);
    const defaults = readDefaults(top.defaults, ctx);
    const rules = readRules(top.rules, ctx);
    const governance =
      top.governance === undefined ? undefined : readGovernance(top.governance, 'governance', faults, strict);
    if (faults.length > 0) throw new ValidationError(faults);
    return PolicyDocument.of(
      // `quorum: 1` is one admin, as without it: left out, so the two serialise alike.
      { defaults, rules: rules.map((r) => r.rule), ...(governance && governance.quorum > 1 && { governance }) },
      rules.map((r) => r.pattern),
    );
  }

  /** The built-in defaults and no rules: a tenant's policy before its first PUT. */
  static empty(): PolicyDocument {
    return PolicyDocument.of(
      { defaults: { ...BUILT_IN_DEFAULTS, approvers: [...BUILT_IN_DEFAULTS.approvers] }, rules: [] },
      [],
    );
  }

  private static of(doc: PolicyDocumentJson, patterns: ToolPattern[]): PolicyDocument {
    return new PolicyDocument(deepFreeze(doc), Object.freeze(patterns));
  }

  get defaults(): Readonly<PolicyDefaults> {
    return this.doc.defaults;
  }

  get rules(): readonly Readonly<PolicyRule>[] {
    return this.doc.rules;
  }

  /** How many distinct admins a control-plane change needs; absent: one. */
  get governance(): Readonly<PolicyGovernance> | undefined {
    return this.doc.governance;
  }

  /**
   * The argument paths whose values are secrets in calls of `toolName`: `defaults.redact` and the `redact` of every
   * rule whose tool glob accepts the name, shadow rules included, whatever their level or arguments (a secret is
   * one whichever rule decides). Memoised like `rulesForTool`.
   */
  redactionsFor(toolName: string): readonly string[] {
    let found = this.redactMemo.get(toolName);
    if (!found) {
      const paths = new Set(this.doc.defaults.redact ?? []);
      for (const i of this.index.candidates(toolName))
        if (this.doc.rules[i].redact && this.patterns[i].matchesTool(toolName))
          for (const path of this.doc.rules[i].redact!) paths.add(path);
      found = Object.freeze([...paths]);
      if (this.redactMemo.size >= TOOL_MEMO_SIZE) this.redactMemo.clear();
      this.redactMemo.set(toolName, found);
    }
    return found;
  }

  /**
   * This document with its shadow rules deciding as enforced ones do, the same rules at the same indices; itself
   * when it has none. What it decides for a call is what the policy would have decided were they enforced.
   */
  withShadowRulesLive(): PolicyDocument {
    if (!this.hasShadowRules || this.shadowsDecide) return this;
    return (this.shadowsLive ??= new PolicyDocument(this.doc, this.patterns, true));
  }

  /**
   * Indices (ascending) of the rules whose pattern accepts `toolName`, arguments and `when` aside; shadow rules
   * are left out (see `withShadowRulesLive`).
   * The index narrows a thousand rules to those whose literal head the name starts with (plus those
   * that start with a wildcard); the answer is memoised per tool name, as a tenant proposes few names.
   */
  rulesForTool(toolName: string): readonly number[] {
    let found = this.candidates.get(toolName);
    if (!found) {
      // A shadow rule never decides (but in the view that asks what it would have decided).
      const live = (i: number) => this.shadowsDecide || this.doc.rules[i].mode !== 'shadow';
      found = Object.freeze(
        this.index.candidates(toolName).filter((i) => live(i) && this.patterns[i].matchesTool(toolName)),
      );
      if (this.candidates.size >= TOOL_MEMO_SIZE) this.candidates.clear();
      this.candidates.set(toolName, found);
    }
    return found;
  }

  /** Whether `defaults.shellTools` (else DEFAULT_SHELL_TOOLS) names this tool; memoised like `rulesForTool`. */
  isShellTool(toolName: string): boolean {
    let found = this.shellMemo.get(toolName);
    if (found === undefined) {
      found = this.shellGlobs.some((g) => g.matchesTool(toolName));
      if (this.shellMemo.size >= TOOL_MEMO_SIZE) this.shellMemo.clear();
      this.shellMemo.set(toolName, found);
    }
    return found;
  }

  equals(other: PolicyDocument): boolean {
    return jsonEqual(this.doc, other.doc);
  }

  /** A fresh, mutable copy of the normalised document. */
  toJSON(): PolicyDocumentJson {
    return JSON.parse(JSON.stringify(this.doc)) as PolicyDocumentJson;
  }
}
