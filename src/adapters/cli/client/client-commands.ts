import { Command, InvalidArgumentError, Option } from 'commander';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader } from 'jose';
import { readFileSync } from 'node:fs';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import {
  allPages,
  type AuditEvent,
  type GrantScope,
  type HaltRequest,
  type Policy,
  type Tool,
  type VerifyResult,
} from '@tollgate/sdk';
import {
  ApiClient,
  CliError,
  ClientOptions,
  connection,
  EXIT,
  ProblemError,
  type Approval,
  type ToolCall,
} from './api-client';
import { oneLine, parseWhen, printJson, table } from './format';
import { unifiedDiff } from './line-diff';
import { PolicyDocument } from '../../../domain/policy/policy-document';
import { ValidationError } from '../../../domain/shared/domain-error';
import { runInbox } from './inbox';
import { needsPasskey } from './passkey-link';
import { grantLifetime } from './duration';
import { oneLineText as clean } from '../safe-text';

/** Set by a command run with `--json`: its refusals are printed as the problem JSON on stdout too. */
export const output = { json: false };

function withConnection(cmd: Command): Command {
  return cmd
    .option('--url <url>', 'Tollgate base URL (default: TOLLGATE_URL or http://127.0.0.1:8080)')
    .option('--token <jwt>', 'bearer token (default: TOLLGATE_TOKEN)');
}

function api(o: ClientOptions): ApiClient {
  return new ApiClient(connection(o));
}

function jsonArg(name: string) {
  return (v: string): Record<string, unknown> => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(v.startsWith('@') ? readFileSync(v.slice(1), 'utf8') : v);
    } catch (e) {
      throw new InvalidArgumentError(`${name} must be a JSON object (or @file): ${(e as Error).message}`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new InvalidArgumentError(`${name} must be a JSON object`);
    return parsed as Record<string, unknown>;
  };
}

function positiveInt(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new InvalidArgumentError('must be a whole number of at least 1');
  return Number(v);
}

function when(v: string): string {
  try {
    return parseWhen(v);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

/** One line, the names and reasons in it others' text: cleaned of control characters for the terminal. */
function decidedLine(call: ToolCall): string {
  return clean(decidedText(call));
}

function decidedText(call: ToolCall): string {
  const q = call.approval?.quorum;
  // An approval towards a quorum leaves the call pending: say how far it has got.
  if (call.status === 'pending' && q)
    return `${call.id} ${call.toolName}: pending, ${q.approvedBy.length} of ${q.needed} approvals (${q.approvedBy.map((a) => a.name ?? a.id).join(', ')})`;
  const d = call.decision;
  const behalf = d?.by.onBehalfOf ? ` for ${d.by.onBehalfOf.name ?? d.by.onBehalfOf.id}` : '';
  const by = d ? ` by ${d.by.name ?? d.by.id}${behalf} via ${d.by.via}` : '';
  return `${call.id} ${call.toolName}: ${call.status}${by}${d?.reason ? ` (${d.reason})` : ''}${d?.editedArguments ? ' with edited arguments' : ''}`;
}

/** The client commands: each talks to a running server over HTTP (`TOLLGATE_URL`, `TOLLGATE_TOKEN`). */
export function addClientCommands(program: Command): void {
  withConnection(
    program
      .command('inbox')
      .description(
        'Live, interactive list of the calls you may decide: ↑/↓ move, enter details, a approve, r reject, e edit arguments, q quit',
      ),
  ).action(async (o: ClientOptions) => {
    await runInbox(api(o));
    // q and Ctrl-C mean now: a refresh or tools request still in flight to a slow server would otherwise keep the
    // process (and the person's terminal) for up to its 30 s timeout after the screen is gone.
    process.exit(EXIT.ok);
  });

  withConnection(
    program
      .command('approve')
      .description('Approve a pending tool call')
      .argument('<id>', 'tool call id')
      .option('--reason <text>', 'why (recorded in the audit trail)')
      .option(
        '--arguments <json>',
        'approve with these arguments instead (a JSON object, or @file)',
        jsonArg('--arguments'),
      )
      .addOption(
        new Option('--always [scope]', 'always allow this tool from now on, in a scope').choices([
          'conversation',
          'agent',
          'tenant',
        ]),
      )
      .option(
        '--expires-in <duration>',
        'with --always: the grant ends after this (90s, 30m, 8h, 7d; at most 90d)',
        grantLifetime,
      )
      .option('--json', 'print the tool call as JSON'),
  ).action(
    async (
      id: string,
      o: ClientOptions & {
        reason?: string;
        arguments?: Record<string, unknown>;
        always?: string | true;
        expiresIn?: number;
        json?: boolean;
      },
    ) => {
      output.json = !!o.json;
      if (o.always && o.arguments) throw new CliError('--arguments cannot be combined with --always', EXIT.usage);
      if (o.expiresIn !== undefined && !o.always) throw new CliError('--expires-in needs --always', EXIT.usage);
      const call = await api(o).decide(
        id,
        o.always
          ? {
              decision: 'always_allow',
              reason: o.reason,
              ...(typeof o.always === 'string' ? { scope: o.always as GrantScope } : {}),
              ...(o.expiresIn ? { expiresIn: o.expiresIn } : {}),
            }
          : { decision: 'approve', reason: o.reason, arguments: o.arguments },
      );
      if (o.json) printJson(call);
      else console.log(decidedLine(call));
    },
  );

  withConnection(
    program
      .command('reject')
      .description('Reject a pending tool call')
      .argument('<id>', 'tool call id')
      .option('--reason <text>', 'why (shown to the agent and recorded)')
      .option('--json', 'print the tool call as JSON'),
  ).action(async (id: string, o: ClientOptions & { reason?: string; json?: boolean }) => {
    output.json = !!o.json;
    const call = await api(o).decide(id, { decision: 'reject', reason: o.reason });
    if (o.json) printJson(call);
    else console.log(decidedLine(call));
  });

  withConnection(
    program
      .command('pending')
      .description('List the calls you may decide (once; `inbox` is the live view)')
      .option('--json', 'print them as JSON'),
  ).action(async (o: ClientOptions & { json?: boolean }) => {
    output.json = !!o.json;
    const items = await api(o).approvals();
    if (o.json) return printJson({ items });
    if (!items.length) return console.log('Nothing waiting for you.');
    console.log(
      table(
        ['ID', 'TOOL', 'LEVEL', 'CONVERSATION', 'AGENT', 'ARGUMENTS'],
        items.map((a: Approval) => [
          a.id,
          a.toolName,
          // A call that needs a passkey is approved in the web inbox only: `approve <id>` would be refused.
          needsPasskey(a) ? `${a.policy.level} (passkey)` : a.policy.level,
          a.conversation.title ?? a.conversationId,
          a.conversation.agentId,
          oneLine(a.arguments, 60),
        ]),
      ),
    );
  });

  const audit = withConnection(
    program
      .command('audit')
      .description('Audit events (auditor, admin), oldest first: a table, or JSON with --json')
      .option('--tool <name>', 'tool name')
      .option('--type <types>', 'event type(s), comma-separated, e.g. ToolCallApproved,ToolCallRejected')
      .option('--actor <id>', "actor id (a person's or agent's sub, policy, system)")
      .option('--conversation <id>', 'conversation id')
      .option('--call <id>', 'tool call id')
      .option('--since <when>', 'from this time: an ISO date or a span back from now (30m, 8h, 7d)', when)
      .option('--until <when>', 'before this time (same forms)', when)
      .option('--limit <n>', 'at most this many events', positiveInt, 100)
      .option('--cursor <cursor>', 'continue after a previous nextCursor')
      .option('--json', 'print {events, nextCursor} as JSON'),
  ).action(
    async (
      o: ClientOptions & {
        tool?: string;
        type?: string;
        actor?: string;
        conversation?: string;
        call?: string;
        since?: string;
        until?: string;
        limit: number;
        cursor?: string;
        json?: boolean;
      },
    ) => {
      output.json = !!o.json;
      const client = api(o);
      const events: AuditEvent[] = [];
      let cursor = o.cursor;
      let next: string | null = null;
      do {
        const q = {
          toolName: o.tool,
          type: o.type,
          actor: o.actor,
          conversationId: o.conversation,
          toolCallId: o.call,
          from: o.since,
          to: o.until,
          cursor,
          limit: Math.min(1000, o.limit - events.length),
        };
        const page = await client.call((t) => t.listAuditEvents(q));
        events.push(...page.events);
        next = page.nextCursor;
        cursor = next ?? undefined;
      } while (next && events.length < o.limit);
      if (o.json) return printJson({ events, nextCursor: next });
      if (!events.length) return console.log('No events.');
      console.log(
        table(
          ['SEQ', 'AT', 'TYPE', 'TOOL', 'CALL', 'ACTOR', 'DETAIL'],
          events.map((e) => [
            String(e.seq),
            e.at.replace('T', ' ').replace(/\.\d+Z$/, 'Z'),
            e.type,
            e.toolName ?? '',
            e.toolCallId ?? '',
            actorOf(e),
            detailOf(e),
          ]),
          [0, 0, 0, 32, 40, 32, 60],
        ),
      );
      if (next) console.log(`… more: --cursor ${next}`);
    },
  );
  addAuditIntegrityCommands(audit);

  const policy = program
    .command('policy')
    .description("The tenant's policy: get it, apply a new version from a file, list, diff and roll back versions");
  withConnection(
    policy
      .command('get')
      .description('Print the current policy (YAML by default, ready for `policy apply`)')
      .option('--json', 'the API answer as JSON: {version, defaults, rules, updatedAt, updatedBy}')
      .option('--yaml', 'YAML (the default)'),
  ).action(async (o: ClientOptions & { json?: boolean; yaml?: boolean }) => {
    if (o.json && o.yaml) throw new CliError('choose one of --json and --yaml', EXIT.usage);
    output.json = !!o.json;
    const p = await api(o).call((t) => t.getPolicy());
    if (o.json) return printJson(p);
    const by = p.updatedBy ? ` by ${p.updatedBy}` : '';
    process.stdout.write(
      `# policy version ${p.version}${p.updatedAt ? `, ${p.updatedAt}${by}` : ' (built-in defaults)'}\n${toYaml({ defaults: p.defaults, rules: p.rules })}`,
    );
  });
  withConnection(
    policy
      .command('apply')
      .description('Make FILE (YAML or JSON; - for stdin) the new policy version (admin)')
      .argument('<file>', 'policy document')
      .option('--json', 'print the new policy as JSON'),
  ).action(async (file: string, o: ClientOptions & { json?: boolean }) => {
    output.json = !!o.json;
    let text: string;
    try {
      text = readFileSync(file === '-' ? 0 : file, 'utf8');
    } catch (e) {
      throw new CliError(`cannot read ${file}: ${(e as Error).message}`, EXIT.usage);
    }
    const isJson = /\.json$/i.test(file) || /^\s*[{[]/.test(text);
    const p = await api(o).put<Policy>('/v1/policy', {
      raw: { text, contentType: isJson ? 'application/json' : 'application/yaml' },
    });
    if (o.json) return printJson(p);
    console.log(`Policy version ${p.version} applied (${p.rules.length} rule${p.rules.length === 1 ? '' : 's'})`);
  });
  addPolicyLifecycleCommands(policy);
  addPolicyAnalysisCommand(policy);

  withConnection(
    program
      .command('tools')
      .description('The registered tools and their flags')
      .option('--json', 'print {items} as JSON'),
  ).action(async (o: ClientOptions & { json?: boolean }) => {
    output.json = !!o.json;
    const items = await api(o).call((t) => allPages((cursor) => t.listTools({ limit: 1000, cursor }), Infinity));
    if (o.json) return printJson({ items });
    if (!items.length) return console.log('No tools registered.');
    const flags = (t: Tool) =>
      [t.isReadOnly && 'read-only', t.requiresApproval && 'requires-approval', t.destructive && 'destructive']
        .filter(Boolean)
        .join(',') || '-';
    console.log(
      table(
        ['NAME', 'FLAGS', 'REGISTERED BY', 'DESCRIPTION'],
        items.map((t) => [t.name, flags(t), t.registeredBy?.id ?? '', t.description ?? '']),
        [0, 0, 0, 70],
      ),
    );
  });

  const scope = (cmd: Command) =>
    cmd
      .option('--agent <sub>', "an agent (its token's sub) instead of the whole tenant")
      .option('--conversation <id>', 'a conversation instead of the whole tenant')
      .option('--json', 'print the answer as JSON');
  const target = (o: { agent?: string; conversation?: string }): Omit<HaltRequest, 'reason'> => {
    if (o.agent && o.conversation)
      throw new CliError('choose one of --agent and --conversation (neither: the whole tenant)', EXIT.usage);
    return o.agent
      ? { scope: 'agent', id: o.agent }
      : o.conversation
        ? { scope: 'conversation', id: o.conversation }
        : { scope: 'tenant' };
  };
  withConnection(
    scope(
      program
        .command('halt')
        .description(
          'Kill switch (admin): cancel pending and unclaimed calls and refuse new ones, in the tenant or one agent or conversation',
        ),
    ),
  )
    .requiredOption('--reason <text>', 'why (required, recorded)')
    .action(async (o: ClientOptions & { agent?: string; conversation?: string; reason: string; json?: boolean }) => {
      output.json = !!o.json;
      const t = target(o);
      const r = await api(o).call((tg) => tg.halt({ ...t, reason: o.reason }));
      if (o.json) return printJson(r);
      const what = t.scope === 'tenant' ? 'the tenant' : `${t.scope} ${t.id}`;
      console.log(
        r.changed
          ? `Halted ${what}; ${r.cancelledToolCallIds?.length ?? 0} call(s) cancelled`
          : `${what} was already halted`,
      );
    });
  withConnection(
    scope(program.command('resume').description('Lift a halt (admin), with the same scope it was set with')),
  )
    .option('--reason <text>', 'why')
    .action(async (o: ClientOptions & { agent?: string; conversation?: string; reason?: string; json?: boolean }) => {
      output.json = !!o.json;
      const t = target(o);
      const r = await api(o).call((tg) => tg.resume({ ...t, ...(o.reason ? { reason: o.reason } : {}) }));
      if (o.json) return printJson(r);
      const what = t.scope === 'tenant' ? 'the tenant' : `${t.scope} ${t.id}`;
      console.log(r.changed ? `Resumed ${what}` : `${what} was not halted`);
    });
}

/**
 * `audit checkpoint` prints a signed checkpoint of the chain head, to keep outside the database; `audit verify`
 * recomputes the chain, and with `--checkpoint FILE` also checks that the database still holds the chain up to
 * that checkpoint (a cut tail with a rewritten head passes plain verify, not this). With `--jwks FILE` the
 * checkpoint's signature is first checked here, against keys the operator pinned outside the database.
 * The options of `audit` itself (--url, --token, --json) are read from it too: commander gives them to the parent.
 */
function addAuditIntegrityCommands(audit: Command): void {
  addAuditReviewersCommand(audit);
  withConnection(
    audit
      .command('checkpoint')
      .description(
        'Print a signed checkpoint of the audit chain (a compact JWS) to keep outside the database: tollgate audit checkpoint > cp.jws',
      )
      .option('--json', 'print {jws, tenant, seq, hash, at}'),
  ).action(async (_o: unknown, cmd: Command) => {
    const o = cmd.optsWithGlobals<ClientOptions & { json?: boolean }>();
    output.json = !!o.json;
    const cp = await api(o).call((t) => t.getAuditCheckpoint());
    if (o.json) return printJson(cp);
    process.stdout.write(`${cp.jws}\n`);
  });

  withConnection(
    audit
      .command('verify')
      .description('Recompute the audit hash chain (auditor, admin); exits 1 when it does not verify')
      .option(
        '--checkpoint <file>',
        'also check the chain against a checkpoint saved earlier (tollgate audit checkpoint > file)',
      )
      .option(
        '--jwks <file>',
        "check the checkpoint's signature against these pinned keys (a saved /.well-known/jwks.json) before asking the server",
      )
      .option('--json', 'print the answer as JSON'),
  ).action(async (_o: unknown, cmd: Command) => {
    const o = cmd.optsWithGlobals<ClientOptions & { checkpoint?: string; jwks?: string; json?: boolean }>();
    output.json = !!o.json;
    if (o.jwks && !o.checkpoint)
      throw new CliError('--jwks checks a checkpoint: give --checkpoint FILE too', EXIT.usage);
    const jws = o.checkpoint ? readCheckpoint(o.checkpoint) : undefined;
    const client = api(o);
    if (jws && o.jwks) await checkPinned(jws, o.jwks);
    const r = await client.call((t) => t.verifyAuditTrail({ checkpoint: jws }));
    if (o.json) printJson(r);
    else console.log(verifyLine(r, !!jws));
    if (!r.ok)
      throw new CliError(
        `the audit trail does not verify${r.firstBadSeq !== undefined ? ` (first bad seq ${r.firstBadSeq})` : ''}: ${r.problem ?? 'see above'}`,
        EXIT.refused,
      );
  });
}

/**
 * `audit reviewers`: per person who decided held calls in the window, their decisions, approve rate and time to
 * decide (from when the server first showed them the card), and HITL-03, rubber-stamping (issue 28, part 9).
 */
function addAuditReviewersCommand(audit: Command): void {
  withConnection(
    audit
      .command('reviewers')
      .description(
        'How each person decides (auditor, admin): approvals, rejections, approve rate, median and p90 time to decide; flags rubber-stamping (HITL-03)',
      )
      .option('--since <when>', 'from this time: an ISO date or a span back from now (30m, 8h, 7d)', when)
      .option('--until <when>', 'before this time (same forms)', when)
      .option('--json', 'print the answer as JSON'),
  ).action(async (_o: unknown, cmd: Command) => {
    const o = cmd.optsWithGlobals<ClientOptions & { since?: string; until?: string; json?: boolean }>();
    output.json = !!o.json;
    const r = await api(o).call((t) => t.getAuditReviewers({ from: o.since, to: o.until }));
    if (o.json) return printJson(r);
    if (r.reviewers.length === 0) return console.log('No one decided a held call in this window.');
    const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    console.log(
      table(
        [
          'PERSON',
          'DECISIONS',
          'APPROVED',
          'REJECTED',
          'RATE',
          'MEDIAN',
          'P90',
          `UNDER ${r.thresholds.quickMs / 1000} S`,
          '',
        ],
        r.reviewers.map((p) => [
          clean(p.personId),
          String(p.decisions),
          String(p.approvals),
          String(p.rejections),
          `${Math.round(p.approveRate * 100)}%`,
          secs(p.medianDecideMs),
          secs(p.p90DecideMs),
          String(p.quickDecisions),
          p.rubberStamping ? 'HITL-03 rubber-stamping?' : '',
        ]),
        [40],
      ),
    );
    const { minApprovals, minQuickShare, quickMs } = r.thresholds;
    if (r.reviewers.some((p) => p.rubberStamping))
      console.log(
        `HITL-03: ${minApprovals} or more approvals, ${Math.round(minQuickShare * 100)}% or more of them within ${quickMs / 1000} s of the card being shown.`,
      );
    if (r.truncated)
      console.log('Only the first 50 000 decisions of the window were weighed: narrow it with --since/--until.');
  });
}

/** The compact JWS in FILE, as `audit checkpoint` prints it or as the JSON form `{jws, …}`. */
function readCheckpoint(file: string): string {
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8').trim();
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`, EXIT.usage);
  }
  if (text.startsWith('{')) {
    try {
      text = String((JSON.parse(text) as { jws?: unknown }).jws ?? '');
    } catch {
      text = '';
    }
  }
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(text)) {
    throw new CliError(
      `${file} does not hold a checkpoint (the compact JWS that \`tollgate audit checkpoint\` prints)`,
      EXIT.usage,
    );
  }
  return text;
}

/**
 * Checks the signature against keys pinned outside the database, never against a key the checkpoint carries
 * itself: a key inside what it vouches for proves nothing. A mismatch is a failed check (exit 1).
 */
async function checkPinned(jws: string, file: string): Promise<void> {
  let jwks: Parameters<typeof createLocalJWKSet>[0];
  try {
    jwks = JSON.parse(readFileSync(file, 'utf8')) as Parameters<typeof createLocalJWKSet>[0];
    if (!Array.isArray(jwks?.keys)) throw new Error('no "keys" array');
  } catch (e) {
    throw new CliError(`${file} is not a JWKS (a saved /.well-known/jwks.json): ${(e as Error).message}`, EXIT.usage);
  }
  let typ: unknown;
  try {
    typ = decodeProtectedHeader(jws).typ;
  } catch {
    typ = undefined;
  }
  if (typ !== 'tollgate-checkpoint+jwt')
    throw new CliError(
      'the checkpoint file holds no audit checkpoint (a JWS of typ tollgate-checkpoint+jwt)',
      EXIT.usage,
    );
  try {
    await compactVerify(jws, createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
  } catch {
    throw new CliError(`the checkpoint's signature does not verify with the keys pinned in ${file}`, EXIT.refused);
  }
}

function verifyLine(r: VerifyResult, withCheckpoint: boolean): string {
  const cp = r.checkpoint;
  // Without --checkpoint, the server used the latest checkpoint of its file sink, or says why it used none.
  const which = cp?.source === 'sink' ? `the latest checkpoint in the sink, ${cp.name ?? 'latest'}: ` : '';
  if (!r.ok)
    return `FAILED${r.firstBadSeq !== undefined ? ` at seq ${r.firstBadSeq}` : ''}: ${which}${r.problem ?? 'the chain does not verify'} (${r.checked} event(s) checked)`;
  if (!withCheckpoint && cp?.source === 'sink' && !cp.purged)
    return `ok: ${r.checked} event(s) verify; it still holds ${which.slice(0, -2)} (${cp.at}, seq ${cp.seq}, hash ${cp.hash.slice(0, 12)}…)`;
  if (!withCheckpoint && !cp && r.noCheckpoint)
    return `ok: ${r.checked} event(s) verify; no checkpoint was used: ${clean(r.noCheckpoint)}`;
  const against = !cp
    ? ''
    : cp.purged
      ? `; the checkpoint of ${cp.at} (seq ${cp.seq}) is older than the retained events, which a retention purge accounts for`
      : `; it still holds the checkpoint of ${cp.at} (seq ${cp.seq}, hash ${cp.hash.slice(0, 12)}…)`;
  return `ok: ${r.checked} event(s) verify${against}`;
}

function actorOf(e: AuditEvent): string {
  const via = (e.data?.via as string | undefined) ?? e.actor.via;
  return `${e.actor.name ?? e.actor.id ?? ''}${via ? ` via ${via}` : ''}`;
}

function detailOf(e: AuditEvent): string {
  const d = e.data ?? {};
  if (e.type === 'PolicyUpdated' && d.version !== undefined) return `version ${String(d.version)}`;
  const parts = [d.level, d.reason].filter((x): x is string => typeof x === 'string' && x !== '');
  return parts.join(': ');
}

interface PolicyVersionSummary {
  version: number;
  createdAt: string;
  createdBy: string;
  rules: number;
}

interface PolicyVersionDoc {
  version: number;
  defaults: Policy['defaults'];
  rules: Policy['rules'];
}

interface PolicySimulation {
  policyVersion: number;
  since: string | null;
  truncated: boolean;
  results: unknown[];
  summary: { total: number; changed: number; transitions: Array<{ then: string; now: string; count: number }> };
}

/** `policy versions`, `policy rollback`, `policy diff`: the version history, over the same connection options. */
function addPolicyLifecycleCommands(policy: Command): void {
  withConnection(
    policy
      .command('versions')
      .description('List the policy versions, newest first')
      .option('--json', 'print {items} as JSON'),
  ).action(async (o: ClientOptions & { json?: boolean }) => {
    output.json = !!o.json;
    const client = api(o);
    const items = await allPages(
      (cursor) =>
        client.get<{ items: PolicyVersionSummary[]; nextCursor: string | null }>(
          `/v1/policy/versions?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        ),
      Infinity,
    );
    if (o.json) return printJson({ items });
    if (!items.length) return console.log('No policy versions: the built-in defaults are in force.');
    console.log(
      table(
        ['VERSION', 'CREATED', 'BY', 'RULES'],
        items.map((v, i) => [`${v.version}${i === 0 ? ' (in force)' : ''}`, v.createdAt, v.createdBy, String(v.rules)]),
      ),
    );
  });

  withConnection(
    policy
      .command('rollback')
      .description("Make version N's document a new version (admin); history is kept")
      .argument('<n>', 'the version to roll back to', positiveInt)
      .option('--reason <text>', 'why (recorded in the audit trail)')
      .option('--json', 'print the new policy as JSON'),
  ).action(async (n: number, o: ClientOptions & { reason?: string; json?: boolean }) => {
    output.json = !!o.json;
    const p = await api(o).post<Policy>('/v1/policy/rollback', {
      version: n,
      ...(o.reason ? { reason: o.reason } : {}),
    });
    if (o.json) return printJson(p);
    console.log(
      `Policy version ${p.version} applied: the document of version ${n} (${p.rules.length} rule${p.rules.length === 1 ? '' : 's'})`,
    );
  });

  withConnection(
    policy
      .command('diff')
      .description(
        'Compare FILE (YAML or JSON; - for stdin) with the policy in force or version N; exit 0 when equal, 1 when different',
      )
      .argument('<file>', 'candidate policy document')
      .option('--against <n>', 'compare with this version instead of the one in force', positiveInt)
      .option('--simulate', 'also judge the recorded calls by the candidate and print what would change')
      .option('--days <n>', 'with --simulate: the calls of the last N days (default 7)', positiveInt)
      .option('--json', 'print {equal, against, diff, simulation?} as JSON'),
  ).action(
    async (
      file: string,
      o: ClientOptions & { against?: number; simulate?: boolean; days?: number; json?: boolean },
    ) => {
      output.json = !!o.json;
      if (o.days !== undefined && !o.simulate) throw new CliError('--days needs --simulate', EXIT.usage);
      const candidate = readCandidate(file);
      const client = api(o);
      const base =
        o.against === undefined
          ? await client.call((t) => t.getPolicy())
          : await client.get<PolicyVersionDoc>(`/v1/policy/versions/${o.against}`);
      const from = `version ${base.version}${o.against === undefined ? ' (in force)' : ''}`;
      const diff = unifiedDiff(toYaml({ defaults: base.defaults, rules: base.rules }), toYaml(candidate), {
        from,
        to: file === '-' ? 'stdin' : file,
      });
      const simulation = o.simulate
        ? await client.post<PolicySimulation>('/v1/policy/simulate', {
            document: candidate,
            ...(o.days ? { days: o.days } : {}),
          })
        : undefined;
      process.exitCode = diff ? EXIT.refused : EXIT.ok;
      if (o.json)
        return printJson({ equal: !diff, against: base.version, diff, ...(simulation ? { simulation } : {}) });
      process.stdout.write(diff || `${file === '-' ? 'stdin' : file} matches ${from}\n`);
      if (simulation) console.log(simulationSummary(simulation));
    },
  );
}

/** `policy analyze`: rules that never decide, or decide out of their order (GET /v1/policy/analysis). */
function addPolicyAnalysisCommand(policy: Command): void {
  withConnection(
    policy
      .command('analyze')
      .alias('analyse')
      .description('List rules of the policy in force that never decide or decide out of their order; exit 1 when any')
      .option('--json', 'print {version, findings} as JSON'),
  ).action(async (o: ClientOptions & { json?: boolean }) => {
    output.json = !!o.json;
    const a = await api(o).get<{ version: number; findings: Array<{ kind: string; rule: number; message: string }> }>(
      '/v1/policy/analysis',
    );
    process.exitCode = a.findings.length ? EXIT.refused : EXIT.ok;
    if (o.json) return printJson(a);
    if (!a.findings.length) return console.log(`Policy version ${a.version}: every rule can decide a call.`);
    console.log(`Policy version ${a.version}:`);
    for (const f of a.findings)
      console.log(`  ${f.kind === 'unreachable' ? 'never decides' : 'out of order '}  ${clean(f.message)}`);
  });
}

/** The candidate, normalised as the server stores documents (defaults filled in), so only real differences show. */
function readCandidate(file: string): ReturnType<PolicyDocument['toJSON']> {
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`, EXIT.usage);
  }
  let raw: unknown;
  try {
    raw = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 50 });
  } catch (e) {
    throw new CliError(
      `${file} is not valid ${/\.json$/i.test(file) ? 'JSON' : 'YAML'}: ${(e as Error).message.split('\n')[0]}`,
      EXIT.usage,
    );
  }
  try {
    return PolicyDocument.parse(raw).toJSON();
  } catch (e) {
    if (e instanceof ValidationError) throw new CliError(`${file} is not a valid policy: ${e.message}`, EXIT.usage);
    throw e;
  }
}

function simulationSummary(s: PolicySimulation): string {
  const window = s.since ? ` proposed since ${s.since}` : '';
  const head = `Simulated against ${s.summary.total} recorded call${s.summary.total === 1 ? '' : 's'}${window}${s.truncated ? ' (the newest only: more were recorded)' : ''}: ${s.summary.changed} would change.`;
  const rows = s.summary.transitions.map((t) => [t.then, t.now, String(t.count), t.then === t.now ? '' : 'changed']);
  return rows.length ? `${head}\n${table(['THEN', 'NOW', 'CALLS', ''], rows)}` : head;
}

/** Refusals print `code: detail` on stderr (and the problem as JSON on stdout under --json). */
export function reportError(e: CliError): void {
  if (e instanceof ProblemError) {
    if (output.json) printJson(e.problem);
    // A problem's detail may quote what an agent sent.
    process.stderr.write(`${clean(e.message)}\n`);
  } else {
    process.stderr.write(`tollgate: ${clean(e.message)}\n`);
  }
}
