'use strict';
/**
 * In-process policy evaluation on a 1,000-rule policy (CONTRACT §5 allows at most 1,000): the built
 * PolicyDocument.parse + ApprovalPolicy.evaluate, each call timed on its own with hrtime. Two call mixes:
 *   - "repeating names": 64 tool names over and over, as an agent fleet proposes (the per-name candidate
 *     memo of PolicyDocument is warm);
 *   - "all-distinct names": every call a tool name never seen before (the memo misses every time, so all
 *     1,000 tool-name patterns run).
 * Baseline in the same loop and the same timer: a trivial function call (what the timer itself costs).
 */
const { join } = require('node:path');

const DIST = join(__dirname, '..', '..', 'dist', 'src');

const VERBS = ['get', 'list', 'search', 'update', 'delete', 'exec', 'send', 'create'];
const OBJECTS = ['source', 'user', 'invoice', 'file', 'ticket', 'record', 'message', 'job'];

/** A large, mixed policy: prefix globs, argument patterns, conditions and broad mid-string wildcards. */
function thousandRulePolicy() {
  const rules = [];
  const levels = ['automatic', 'notify', 'confirm'];
  for (let i = 0; i < 600; i++) rules.push({ match: `svc${i}_${VERBS[i % VERBS.length]}_*`, level: levels[i % 3] });
  for (let i = 0; i < 200; i++) {
    rules.push(
      i % 2 === 0
        ? { match: `svc${i}_exec_*(cmd=rm *, path=/prod/*)`, level: 'deny', reason: `no deletes in prod for svc${i}` }
        : { match: `svc${i}_send_*(to=*@external.example, subject=*)`, level: 'manual', approvers: ['admin'] },
    );
  }
  for (let i = 0; i < 100; i++) {
    rules.push(
      i % 2 === 0
        ? { match: `svc${i}_*`, level: 'confirm', when: { confidenceBelow: 0.5 } }
        : { match: `svc${i}_*`, level: 'manual', when: { estimatedCostAbove: 100 }, timeoutSeconds: 900 },
    );
  }
  for (let i = 0; i < 80; i++)
    rules.push({
      match: `*_${VERBS[i % VERBS.length]}_${OBJECTS[i % OBJECTS.length]}${i}*`,
      level: i % 4 === 0 ? 'deny' : 'confirm',
    });
  for (let i = 0; i < 19; i++)
    rules.push({ match: `*_${OBJECTS[i % OBJECTS.length]}*(id=${i}*)`, level: 'confirm', requireRole: 'admin' });
  rules.push({ match: '*', level: 'manual', when: { confidenceBelow: 0.2 } });
  if (rules.length !== 1000) throw new Error(`policy has ${rules.length} rules`);
  return { defaults: { unknownTools: 'confirm', timeoutSeconds: 300, approvers: ['approver', 'admin'] }, rules };
}

function callFor(name, i) {
  return {
    toolName: name,
    arguments: {
      id: `src_${i % 97}`,
      cmd: 'ls -la /tmp',
      path: '/home/bench',
      to: 'ann@example.com',
      subject: 'hello',
    },
    confidence: 0.9,
    estimatedCost: 1,
  };
}

function timeEach(n, fn) {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    fn(i);
    out[i] = Number(process.hrtime.bigint() - t0) / 1000; // µs
  }
  return out;
}

/** Runs the policy micro-benchmark; answers {rules, repeating, distinct, trivial} as arrays of µs. */
function runPolicyBench({ samples }) {
  require('reflect-metadata');
  const { ApprovalPolicy } = require(join(DIST, 'domain/policy/approval-policy.js'));
  const { PolicyDocument } = require(join(DIST, 'domain/policy/policy-document.js'));
  const document = PolicyDocument.parse(thousandRulePolicy());
  const ctx = {
    policy: document,
    policyVersion: 7,
    tool: undefined,
    grants: [],
    conversation: { id: 'conv-1', agentId: 'bench-agent', user: { id: 'ann', roles: ['approver'] } },
  };
  const names = Array.from(
    { length: 64 },
    (_, i) => `svc${(i * 37) % 700}_${VERBS[i % VERBS.length]}_${OBJECTS[(i * 3) % OBJECTS.length]}${i % 90}`,
  );
  const repeatingCalls = names.map((n, i) => callFor(n, i));
  let sink = 0;
  const levels = {};
  for (const call of repeatingCalls) {
    const { level } = ApprovalPolicy.evaluate(call, ctx);
    levels[level] = (levels[level] ?? 0) + 1;
  }
  const evaluateRepeating = (i) => {
    sink += ApprovalPolicy.evaluate(repeatingCalls[i & 63], ctx).timeoutSeconds;
  };
  let fresh = 0;
  const evaluateDistinct = () => {
    const n = fresh++;
    const v = ApprovalPolicy.evaluate(
      callFor(`svc${n % 700}_${VERBS[n % VERBS.length]}_${OBJECTS[n % OBJECTS.length]}_n${n}`, n),
      ctx,
    );
    sink += v.timeoutSeconds;
  };
  const trivial = (i) => {
    sink += ((i * 31) ^ 7) & 1;
  };
  // The distinct mix builds a call object per iteration; its baseline does the same without evaluating.
  const buildOnly = (i) => {
    sink += callFor(`x${i}`, i).arguments.id.length;
  };

  const warm = Math.min(20_000, samples);
  timeEach(warm, evaluateRepeating);
  timeEach(Math.ceil(warm / 4), evaluateDistinct);
  timeEach(warm, trivial);
  const out = {
    rules: document.rules.length,
    levelsSeen: levels,
    repeating: timeEach(samples, evaluateRepeating),
    // Each distinct call runs every pattern (~100× a repeating one): a quarter of the samples keeps the run short.
    distinct: timeEach(Math.ceil(samples / 4), evaluateDistinct),
    trivial: timeEach(samples, trivial),
    buildOnly: timeEach(samples, buildOnly),
    candidatesPerName: names.map((n) => document.rulesForTool(n).length),
  };
  if (sink === 42) console.log(''); // keep the work observable
  return out;
}

module.exports = { runPolicyBench, thousandRulePolicy };
