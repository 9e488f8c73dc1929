import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ApprovalOutcome, Conversation, Tollgate, ToolCall, ToolCallHandle } from '@tollgate/sdk';
import {
  cut,
  HookInputError,
  parseHookInput,
  readBounded,
  storable,
  storableJson,
  type HookInput,
} from './claude-code/hook-input';
import { hookOutput, type Verdict } from './claude-code/hook-output';
import { builtInFlags, displayOf, PASS_THROUGH, plainPaths, refusedGlob } from './claude-code/tools';

/**
 * `tollgate hook claude-code`: Claude Code's PreToolUse (or PermissionRequest) hook proposes each tool call to
 * Tollgate, waits for the policy or a person, claims an allowed call and answers allow, deny or ask; its
 * PostToolUse and PostToolUseFailure hooks report the result. stdout carries only Claude Code's JSON; everything
 * said goes to stderr, never the token. It loads the SDK and nothing of the server: every tool call pays its start.
 */

export interface HookOptions {
  url?: string;
  tokenFile?: string;
  /** Seconds to wait for a decision; Claude Code's own `timeout` must be longer. */
  wait: number;
  onError: 'deny' | 'ask';
  user?: string;
  role: string[];
  install?: boolean;
  scope: 'project' | 'user';
}

export interface HookAnswer {
  code: number;
  stdout?: string;
  stderr?: string;
}

const MAX_TOKEN_FILE_BYTES = 64 * 1024;
const MAX_ROUNDS = 16;

/** The command as Claude Code runs it: the answer is written, then the process ends at once. */
export async function claudeCode(o: HookOptions): Promise<void> {
  const a = o.install ? install(o) : await answerHook(o, process.env, process.stdin);
  if (a.stderr) process.stderr.write(a.stderr.endsWith('\n') ? a.stderr : `${a.stderr}\n`);
  // Kept-alive sockets must not hold the tool call up: exit once stdout is flushed.
  await new Promise<void>((resolve) => process.stdout.write(a.stdout ?? '', () => resolve()));
  process.exit(a.code);
}

/** Reads the hook's input and answers it; never throws. */
export async function answerHook(
  o: HookOptions,
  env: NodeJS.ProcessEnv,
  stdin: NodeJS.ReadableStream,
): Promise<HookAnswer> {
  let input: HookInput;
  try {
    input = parseHookInput(await readBounded(stdin));
  } catch (e) {
    // Exit 2 blocks the tool in PreToolUse and PermissionRequest, and shows this to Claude.
    const why = e instanceof HookInputError ? e.message : `stdin: ${(e as Error).message}`;
    return { code: 2, stderr: `tollgate hook claude-code: ${why}; the call is blocked` };
  }
  if (PASS_THROUGH.includes(input.toolName)) return { code: 0 };
  if (input.event === 'PostToolUse' || input.event === 'PostToolUseFailure') return report(input, o, env);
  const verdict = await withinBudget(o, (signal, waitingFor) =>
    decide(input, o, env, signal, waitingFor).catch((e: unknown) => failed(o, messageOf(e))),
  );
  const stdout = hookOutput(input.event, verdict);
  return {
    code: 0,
    ...(stdout !== undefined ? { stdout: `${stdout}\n` } : {}),
    ...(verdict.decision !== 'allow' ? { stderr: `tollgate hook claude-code: ${verdict.reason}` } : {}),
  };
}

/**
 * `--wait` is the whole budget: Claude Code runs the tool with its own input once its `timeout` kills the hook, so
 * the hook answers deny at the deadline whatever is still under way (a proposal that claims is not cut short by the
 * SDK). Every request gets a signal that ends a little before, so a wait that runs out can still say which call
 * waits; the process exits after answering, which ends anything left.
 */
async function withinBudget(
  o: HookOptions,
  decide: (signal: AbortSignal, waitingFor: (w: Waiting) => void) => Promise<Verdict>,
): Promise<Verdict> {
  const budgetMs = o.wait * 1000;
  const signal = AbortSignal.timeout(Math.max(1, budgetMs - Math.min(1000, budgetMs / 10)));
  let timer: NodeJS.Timeout | undefined;
  let waiting: Waiting = {}; // what is pending when time runs out: the deny says which call waits
  const deadline = new Promise<Verdict>((resolve) => {
    timer = setTimeout(() => resolve(noDecisionOf(o, waiting.call, waiting.earlier)), budgetMs);
  });
  try {
    return await Promise.race([decide(signal, (w) => (waiting = w)), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

interface Waiting {
  call?: ToolCall;
  earlier?: string[];
}

function noDecisionOf(o: HookOptions, call?: ToolCall, earlier: string[] = []): Verdict {
  if (!call && earlier.length === 0) return noAnswer(o);
  return {
    decision: 'deny',
    reason: call
      ? `Tollgate: no decision on ${call.toolName} within ${o.wait} s. The call (${call.id}) still waits for a person in Tollgate and will not run from this request; once it is decided, ask again`
      : `Tollgate: an earlier call of this session (${earlier.join(', ')}) still waits for a person in Tollgate (${o.wait} s passed); it must be decided first, then ask again`,
  };
}

function noAnswer(o: HookOptions): Verdict {
  return {
    decision: 'deny',
    reason: `Tollgate: no answer from Tollgate within ${o.wait} s, so the call is denied; it may still wait there`,
  };
}

/** Tollgate could not answer: deny (fail closed), or ask the user with `--on-error ask`. */
function failed(o: HookOptions, why: string): Verdict {
  return o.onError === 'ask'
    ? { decision: 'ask', reason: `Tollgate could not decide (${why}); asking you instead (--on-error ask)` }
    : { decision: 'deny', reason: `Tollgate could not decide (${why}), so the call is denied (fail closed)` };
}

async function decide(
  input: HookInput,
  o: HookOptions,
  env: NodeJS.ProcessEnv,
  deadline: AbortSignal,
  waitingFor: (w: Waiting) => void,
): Promise<Verdict> {
  const refused = refusedGlob(input.toolName, input.toolInput);
  if (refused) return { decision: 'deny', reason: refused };
  const sdk = await import('@tollgate/sdk');
  const tollgate = client(sdk, o, env);
  const args = plainPaths(input.toolName, input.toolInput, input.cwd);
  const flags = builtInFlags(input.toolName);
  const why = typeof input.toolInput.description === 'string' ? input.toolInput.description.slice(0, 4000) : '';
  const request = {
    ...(input.toolUseId ? { id: input.toolUseId } : {}),
    toolName: input.toolName,
    arguments: args,
    display: displayOf(input.toolName, args, input.cwd, input.permissionMode),
    ...(why ? { reason: why } : {}),
    ...(flags ? { annotations: flags } : {}),
  };
  const conversationId = await conversationIdOf(sdk, input.sessionId);
  const conv = new sdk.TollgateConversation(tollgate, { id: conversationId } as Conversation);
  const noDecision = (call?: ToolCall, earlier: string[] = []): Verdict => noDecisionOf(o, call, earlier);

  let handle: ToolCallHandle | undefined;
  let started = false;
  // Bounded: a step that keeps being blocked by calls already decided is a fault to report, not to spin on.
  for (let round = 0; !handle; round++) {
    if (round === MAX_ROUNDS) throw new Error(`the proposal was still refused after ${MAX_ROUNDS} tries`);
    try {
      handle = await conv.propose(request, { claim: true, onBlocked: 'throw', signal: deadline });
    } catch (e) {
      if (!(e instanceof sdk.TollgateError)) {
        if (deadline.aborted) return noDecision();
        throw e;
      }
      if (e.code === 'not_found' && !started) {
        // The session's first call: its conversation is started once, then every call goes straight to it.
        started = true;
        try {
          await tollgate.startConversation(conversationOf(input, conversationId, o), { signal: deadline });
        } catch (w) {
          if (deadline.aborted) return noDecision();
          throw w;
        }
        continue;
      }
      if (e.code === 'conversation_blocked') {
        const pending = Array.isArray(e.problem.pendingToolCallIds) ? e.problem.pendingToolCallIds : [];
        if (pending.length === 0) throw e;
        waitingFor({ earlier: pending });
        try {
          await Promise.all(pending.map((id) => tollgate.waitForDecision(id, { signal: deadline })));
        } catch (w) {
          if (deadline.aborted) return noDecision(undefined, pending);
          throw w;
        }
        waitingFor({});
        continue;
      }
      if (e.code === 'halted') return { decision: 'deny', reason: `Tollgate is halted: ${e.detail}` };
      throw e;
    }
  }

  let outcome: ApprovalOutcome;
  if (handle.toolCall.status === 'pending') {
    waitingFor({ call: handle.toolCall });
    try {
      outcome = await handle.wait({ signal: deadline });
    } catch (e) {
      if (deadline.aborted) return noDecision(handle.toolCall);
      throw e;
    }
  } else outcome = sdk.outcomeOf(handle.toolCall);

  if (outcome.status !== 'approved') {
    return {
      decision: 'deny',
      reason: `Tollgate: ${new sdk.ToolCallRejectedError(outcome.status, outcome.toolCall).message}`,
    };
  }
  waitingFor({}); // decided: past here, only Tollgate's answer is waited for
  // Claimed before Claude Code is told to run it: exactly once, with the arguments Tollgate vouches for.
  let claim;
  try {
    claim = await handle.claim({ signal: deadline });
  } catch (e) {
    if (deadline.aborted) return noAnswer(o);
    if (e instanceof sdk.TollgateError && e.code === 'already_executed')
      return {
        decision: 'deny',
        reason: `Tollgate: ${handle.id} was claimed already by another run of this hook (is it installed twice, in the project's and the user's settings?)`,
      };
    if (e instanceof sdk.TollgateError && (e.code === 'halted' || e.code === 'not_approved'))
      return { decision: 'deny', reason: `Tollgate: ${e.detail}` };
    throw e;
  }
  const call = claim.toolCall;
  const by = call.decision?.by;
  const reason =
    !by || by.via === 'policy'
      ? `Allowed by Tollgate's policy: ${call.policy.reason}`
      : `Approved in Tollgate by ${by.name ?? by.id} via ${by.via}${call.decision?.reason ? `: ${call.decision.reason}` : ''}`;
  const edited = call.decision?.editedArguments !== undefined;
  const changed = edited || args !== input.toolInput;
  return {
    decision: 'allow',
    reason: edited ? `${reason} (with edited arguments)` : reason,
    ...(changed ? { updatedInput: claim.arguments } : {}),
  };
}

/** PostToolUse / PostToolUseFailure: the result of the call this session proposed under the same tool_use_id. */
async function report(input: HookInput, o: HookOptions, env: NodeJS.ProcessEnv): Promise<HookAnswer> {
  const say = (s: string) => `tollgate hook claude-code: ${s}`;
  try {
    const sdk = await import('@tollgate/sdk');
    const tollgate = client(sdk, o, env);
    const conversationId = await conversationIdOf(sdk, input.sessionId);
    const key = await sdk.toolCallKey(input.toolUseId!);
    // A separate process from the one that proposed it: the call is found by its external id in the session,
    // looked up alone (a long session's every call, arguments and results, would be megabytes per tool call).
    let conv: Conversation;
    try {
      conv = await tollgate.getConversation(conversationId, { externalIds: [key] });
    } catch (e) {
      // No conversation: no call of this session went through Tollgate (see below).
      if (e instanceof sdk.TollgateError && e.code === 'not_found') return { code: 0 };
      throw e;
    }
    const call = conv.toolCalls?.find((c) => c.externalId === key);
    // Nothing was gated, so nothing to report: Claude Code allowed it itself (a PermissionRequest-only install) or
    // the PreToolUse matcher is narrower than this one. Said on every such tool, it would be noise.
    if (!call) return { code: 0 };
    if (call.status === 'completed') return { code: 0 };
    if (call.status !== 'executed')
      return { code: 1, stderr: say(`${call.id} is ${call.status}, not run through Tollgate: nothing to report`) };
    const result =
      input.event === 'PostToolUseFailure'
        ? { outcome: 'failed' as const, error: input.error ?? 'failed' }
        : { outcome: 'succeeded' as const, output: outputOf(input.toolResponse) };
    await tollgate.reportResult(call.id, result);
    return { code: 0 };
  } catch (e) {
    // The tool has run: exit 1 tells the user (a non-blocking error) without feeding it to Claude.
    return { code: 1, stderr: say(`the result could not be reported to Tollgate (${messageOf(e)})`) };
  }
}

/** Outputs are at most 64 KiB of JSON: a bigger response is kept as its size and its beginning. */
const MAX_OUTPUT_BYTES = 64 * 1024;
function outputOf(response: unknown): unknown {
  const text = JSON.stringify(response ?? null);
  const bytes = Buffer.byteLength(text);
  // The server refuses NUL and split surrogates: they become U+FFFD, and the head ends between characters.
  if (bytes <= MAX_OUTPUT_BYTES) return storableJson(text);
  return { truncated: true, bytes, head: storable(cut(text, 16 * 1024)) };
}

type Sdk = typeof import('@tollgate/sdk');

function client(sdk: Sdk, o: HookOptions, env: NodeJS.ProcessEnv): Tollgate {
  const url = o.url ?? env.TOLLGATE_URL ?? 'http://127.0.0.1:8080';
  // The reason may reach Claude's transcript: never with the URL's user:password.
  const shown = url.replace(/\/\/[^/@]*@/, '//');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`the URL ${JSON.stringify(shown)} is not one (--url, TOLLGATE_URL)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`${shown} is not an http(s) URL`);
  return new sdk.Tollgate({
    url,
    token: tokenOf(o, env),
    // Few and short attempts: Claude Code waits on each, and the hook must answer before its timeout.
    retry: { maxAttempts: 3, initialDelayMs: 200, maxDelayMs: 1000, maxRetryAfterMs: 2000 },
    timeoutMs: 10_000,
    pollSeconds: Math.max(1, Math.min(30, o.wait)),
    headers: { 'user-agent': 'tollgate-claude-code-hook' },
  });
}

function tokenOf(o: HookOptions, env: NodeJS.ProcessEnv): string {
  if (o.tokenFile) {
    let text: string;
    try {
      if (statSync(o.tokenFile).size > MAX_TOKEN_FILE_BYTES) throw new Error('bigger than 64 KiB');
      text = readFileSync(o.tokenFile, 'utf8').trim();
    } catch (e) {
      throw new Error(
        `--token-file ${o.tokenFile}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      );
    }
    if (!text) throw new Error(`--token-file ${o.tokenFile} is empty`);
    return text;
  }
  const token = env.TOLLGATE_TOKEN?.trim();
  if (!token) throw new Error('no agent token: set TOLLGATE_TOKEN or --token-file');
  return token;
}

/** One conversation per Claude Code session; an id the API would refuse is hashed, the same every time. */
async function conversationIdOf(sdk: Sdk, sessionId: string): Promise<string> {
  const id = `claude-code.${sessionId}`;
  return sdk.ID_PATTERN.test(id) ? id : `claude-code.${await sdk.toolCallKey(sessionId)}`;
}

function conversationOf(input: HookInput, id: string, o: HookOptions) {
  const where = input.cwd ? ` in ${input.cwd}` : '';
  return {
    id,
    title: `Claude Code session${where}`.slice(0, 1000),
    metadata: { client: 'claude-code', sessionId: input.sessionId, ...(input.cwd ? { cwd: input.cwd } : {}) },
    ...(o.user ? { user: { id: o.user, roles: o.role } } : {}),
  };
}

function messageOf(e: unknown): string {
  if (e instanceof Error && 'code' in e && 'detail' in e && typeof e.detail === 'string') {
    const status = (e as { status?: number }).status;
    return status === 0 ? e.detail : `${String(e.code)}: ${e.detail}`;
  }
  return e instanceof Error ? e.message : String(e);
}

/** `--install`: the entries into .claude/settings.json of the current directory, or of the home directory. */
function install(o: HookOptions): HookAnswer {
  // Loaded here: the hook itself never needs it.
  const { hookEntries, installInto, PRE_TOOL_TIMEOUT_SECONDS, WAIT_SECONDS } =
    require('./claude-code/install') as typeof import('./claude-code/install');
  const base = o.scope === 'user' ? homedir() : process.cwd();
  const path = join(base, '.claude', 'settings.json');
  const extra = [
    ...(o.url ? ['--url', shellWord(o.url)] : []),
    ...(o.tokenFile ? ['--token-file', shellWord(o.tokenFile)] : []),
    ...(o.onError === 'ask' ? ['--on-error', 'ask'] : []),
    ...(o.user ? ['--user', shellWord(o.user), ...o.role.flatMap((r) => ['--role', shellWord(r)])] : []),
  ];
  // This very CLI, by absolute paths: Claude Code runs hooks with the user's shell, whatever is on its PATH.
  const tollgate = `${shellWord(process.execPath)} ${shellWord(join(__dirname, '..', '..', '..', '..', 'bin', 'tollgate.js'))}`;
  const { added } = installInto(path, hookEntries(tollgate, extra));
  const lines = added.length
    ? [
        `${path}: added ${added.join(', ')} (timeout ${PRE_TOOL_TIMEOUT_SECONDS} s; the hook waits ${WAIT_SECONDS} s for a decision)`,
      ]
    : [`${path}: the hooks are there already; nothing changed`];
  if (!o.tokenFile) lines.push('Claude Code must be started with TOLLGATE_TOKEN (an agent token) and TOLLGATE_URL set');
  return { code: 0, stdout: `${lines.join('\n')}\n` };
}

function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
