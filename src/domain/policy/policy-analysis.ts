/*
 * What a policy document's rules can and cannot do, read from the document alone (GET /v1/policy/analysis): rules
 * that can never decide a call because an earlier-or-stricter rule matches every call they match, and rules whose
 * order reads as "first match wins" while the strictest match decides. Conservative: a finding is certain for
 * arguments as written (a shell rule's parts aside); a rule not reported may still be dead for reasons it cannot see.
 */
import type { PolicyDocument } from './policy-document';
import { strictness } from './supervision-level';
import { globAccepts, type ToolPattern } from './tool-pattern';

export interface PolicyFinding {
  /**
   * `unreachable`: never decides (rule `by` matches every call it matches and wins them all).
   * `order`: listed after a laxer rule that matches some of the same calls, it decides those calls anyway: the
   * earlier rule reads as if it came first, but the strictest matching rule decides.
   */
  kind: 'unreachable' | 'order';
  rule: number;
  by: number;
  message: string;
}

/** At most this many findings are answered: a document with more has one problem many times. */
export const MAX_FINDINGS = 200;

export function analysePolicy(policy: PolicyDocument): PolicyFinding[] {
  const { rules, patterns } = policy;
  const findings: PolicyFinding[] = [];
  // Shadow rules are judged as if enforced: the question is what they would do.
  for (let j = 0; j < rules.length && findings.length < MAX_FINDINGS; j++) {
    const sj = strictness(rules[j].level);
    let dead: number | undefined;
    for (let i = 0; i < rules.length && dead === undefined; i++) {
      if (i === j || rules[i].when !== undefined || rules[i].mode === 'shadow') continue;
      const si = strictness(rules[i].level);
      // Rule i wins every call both match when it is stricter, or as strict and earlier.
      if ((si < sj || (si === sj && i < j)) && covers(patterns[i], patterns[j])) dead = i;
    }
    if (dead !== undefined) {
      findings.push({
        kind: 'unreachable',
        rule: j,
        by: dead,
        message: `Rule ${j} (${rules[j].match}, ${rules[j].level}) never decides: rule ${dead} (${rules[dead].match}, ${rules[dead].level}) matches every call it matches and ${strictness(rules[dead].level) < sj ? 'is stricter' : 'comes first at the same level'}.`,
      });
      continue;
    }
    for (let i = 0; i < j && findings.length < MAX_FINDINGS; i++) {
      if (rules[i].mode === 'shadow' || rules[j].mode === 'shadow') continue;
      if (strictness(rules[j].level) < strictness(rules[i].level) && overlap(patterns[i], patterns[j])) {
        findings.push({
          kind: 'order',
          rule: j,
          by: i,
          message: `Rule ${j} (${rules[j].match}, ${rules[j].level}) comes after rule ${i} (${rules[i].match}, ${rules[i].level}) but decides the calls both match: the strictest matching rule decides, not the first.`,
        });
        break;
      }
    }
  }
  return findings;
}

/** Whether every call `narrow` matches, `wide` matches too (for arguments as written). */
function covers(wide: ToolPattern, narrow: ToolPattern): boolean {
  if (!globCovers(wide.toolGlob, narrow.toolGlob)) return false;
  // Each argument `wide` names must be named by `narrow` with a glob that `wide`'s accepts in full.
  return wide.argumentNames.every((name) => {
    const glob = narrow.argumentGlob(name);
    return glob !== undefined && globCovers(wide.argumentGlob(name)!, glob);
  });
}

/** Whether some call could match both (judged conservatively: one covers the other, name by name). */
function overlap(a: ToolPattern, b: ToolPattern): boolean {
  if (!globCovers(a.toolGlob, b.toolGlob) && !globCovers(b.toolGlob, a.toolGlob)) return false;
  return a.argumentNames.every((name) => {
    const other = b.argumentGlob(name);
    if (other === undefined) return true;
    const mine = a.argumentGlob(name)!;
    return globCovers(mine, other) || globCovers(other, mine);
  });
}

const WILDCARD = /[*?]/;

/**
 * Whether glob `wide` accepts every string glob `narrow` does. Certain answers only: equal globs, `*`, a literal
 * `narrow` that `wide` accepts, or a `wide` that is a literal head then `*` when `narrow` starts with that head.
 */
export function globCovers(wide: string, narrow: string): boolean {
  if (wide === narrow || wide === '*') return true;
  if (!WILDCARD.test(narrow)) return globAccepts(wide, narrow);
  const star = wide.indexOf('*');
  if (star === wide.length - 1 && !WILDCARD.test(wide.slice(0, star))) {
    const head = wide.slice(0, star);
    return narrow.startsWith(head) && !WILDCARD.test(narrow.slice(0, head.length));
  }
  return false;
}
