import { createInterface, Interface } from 'node:readline/promises';
import type {
  ApprovalCallback,
  ApprovalOutcome,
  ApprovalRequest,
} from '../../../application/ports/approval-callback.port';
import type { ToolCallView } from '../../../application/views/views';
import { oneLineText as text, safeJson } from '../safe-text';
import { needsPasskey } from '../client/passkey-link';
import { previewLines } from '../client/schema-prompts';
import { previewFitsDetails, previewPage } from '../client/preview-pager';

/** What the terminal may decide: what the web offers, but edits (the arguments are shown, not edited, here). */
export type TerminalDecision =
  | { decision: 'approve' | 'reject'; reason?: string }
  | { decision: 'always_allow'; scope: 'conversation' | 'agent' | 'tenant' };

/** What the terminal needs from the application: a way to decide (the same DecideToolCallCommand as every channel). */
export interface TerminalDecisions {
  /** Still pending? (Requests replayed from before a restart may have been decided since.) */
  isPending(toolCallId: string): Promise<boolean>;
  decide(toolCallId: string, input: TerminalDecision): Promise<ToolCallView>;
  /** The call's card in the web inbox, where a passkey signs for calls that need one; undefined until known. */
  cardUrl?(toolCallId: string): string | undefined;
}

interface Io {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream;
}

/**
 * `tollgate serve --approve-in-terminal` (single-user mode, seed ADR 012): the server's own terminal asks
 * for each request, one at a time, the others queued. The agent's call stays pending — its long-poll
 * waits — until the person at the terminal answers y or n; a decision taken elsewhere (web, Slack, an
 * expiry, a halt) withdraws the question and says who took it.
 */
export class TerminalApprovalCallback implements ApprovalCallback {
  readonly channel = 'terminal';
  private readonly queue: ApprovalRequest[] = [];
  private readonly seen = new Set<string>();
  private readonly answered = new Set<string>();
  private current?: { request: ApprovalRequest; abort: AbortController; endedBy?: string };
  private rl?: Interface;
  private pumping = false;
  private closed = false;

  /** `tenant`: the only tenant whose requests this terminal answers (its decider acts there). */
  constructor(
    private readonly decisions: TerminalDecisions,
    private readonly io: Io = { input: process.stdin, output: process.stdout },
    private readonly tenant?: string,
  ) {}

  async ask(request: ApprovalRequest): Promise<void> {
    if (this.closed || this.seen.has(request.id) || (this.tenant !== undefined && request.tenantId !== this.tenant))
      return;
    this.seen.add(request.id);
    this.queue.push(request);
    if (this.current)
      this.write(`  (${this.queue.length} more waiting: ${text(request.toolName)} ${request.id} queued)\n`);
    void this.pump();
  }

  /** A `notify` call ran at once: one line, nothing to answer. */
  async notify(r: ApprovalRequest): Promise<void> {
    if (this.closed || (this.tenant !== undefined && r.tenantId !== this.tenant)) return;
    const rule = r.policy.rule === null ? 'policy defaults' : `policy rule ${r.policy.rule}`;
    this.write(`  (ran at once, FYI: ${text(r.toolName)} ${r.id} by ${rule})\n`);
  }

  async tell(outcome: ApprovalOutcome): Promise<void> {
    const id = outcome.toolCall.id;
    if (!this.seen.has(id) || this.answered.has(id)) return;
    this.answered.add(id);
    const what = describe(outcome);
    if (this.current?.request.id === id) {
      this.current.endedBy = what;
      this.current.abort.abort();
      return;
    }
    const at = this.queue.findIndex((r) => r.id === id);
    if (at >= 0) {
      this.queue.splice(at, 1);
      this.write(`  (queued ${text(outcome.toolCall.toolName)} ${id} ${what})\n`);
    }
  }

  close(): void {
    this.closed = true;
    this.current?.abort.abort();
    this.rl?.close();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.closed && this.queue.length) {
        const request = this.queue.shift()!;
        if (this.answered.has(request.id)) continue;
        if (!(await this.decisions.isPending(request.id).catch(() => true))) continue;
        this.current = { request, abort: new AbortController() };
        try {
          await this.converse(request, this.current.abort.signal);
        } catch (e) {
          if (this.current.endedBy)
            this.write(`\n  → ${text(request.toolName)} ${request.id} was ${this.current.endedBy}\n`);
          else if (!this.closed) this.write(`\n  ! ${text((e as Error).message)}\n`);
        } finally {
          this.current = undefined;
        }
      }
    } finally {
      this.pumping = false;
    }
  }

  private async converse(r: ApprovalRequest, signal: AbortSignal): Promise<void> {
    this.write(summary(r, this.queue.length, this.tty));
    if (needsPasskey(r)) return this.converseForPasskey(r, signal);
    // Arguments cut in the summary are approved only once the details have shown them whole; so is a preview (the
    // receipt binds it), and an image preview is approved in the web inbox only.
    const length = safeJson(r.arguments).length;
    const image = r.preview?.kind === 'image';
    let seenWhole =
      length <= SUMMARY_ARGUMENTS_MAX && (!r.preview || previewFitsDetails(r.preview, Infinity, SUMMARY_PREVIEW_LINES));
    for (;;) {
      const answer = (
        await this.question(
          seenWhole
            ? `  Approve? [y]es / [n]o / ${r.policy.level === 'manual' ? '' : '[a]lways / '}[d]etails: `
            : '  [n] reject / [d]etails (to approve, see the arguments whole first): ',
          signal,
        )
      )
        .trim()
        .toLowerCase();
      if (answer === 'd' || answer === 'details') {
        this.write(fullDetails(r, this.tty));
        if (r.preview && !image)
          this.write(`${previewPage(r.preview, r.toolName).replace(/^/gm, '  ')}${this.tty ? RESET : ''}`);
        seenWhole = !image;
        continue;
      }
      const approving = answer === 'y' || answer === 'yes' || answer === 'a' || answer === 'always';
      if (approving && image) {
        this.write(
          '  The preview is an image, which a terminal cannot show: approve in the web inbox, or n rejects.\n',
        );
        continue;
      }
      if (approving && !seenWhole) {
        this.write(
          length > SUMMARY_ARGUMENTS_MAX
            ? `  Arguments too long to show here: ${length} characters. Press d to see them all before approving.\n`
            : '  The preview is longer than shown here. Press d to see all of it before approving.\n',
        );
        continue;
      }
      if (answer === 'y' || answer === 'yes') return this.decide(r, { decision: 'approve' });
      if ((answer === 'a' || answer === 'always') && r.policy.level !== 'manual') {
        // As the web's "Always allow": approve, and let the tool run without asking from now on in a scope.
        const scope = (
          await this.question('  Always allow in [c]onversation / a[g]ent / [t]enant (empty: conversation): ', signal)
        )
          .trim()
          .toLowerCase();
        const chosen = (
          {
            '': 'conversation',
            c: 'conversation',
            conversation: 'conversation',
            g: 'agent',
            agent: 'agent',
            t: 'tenant',
            tenant: 'tenant',
          } as const
        )[scope as 'c'];
        if (!chosen) {
          this.write('  Please answer c, g or t.\n');
          continue;
        }
        return this.decide(r, { decision: 'always_allow', scope: chosen });
      }
      if (answer === 'n' || answer === 'no') {
        const reason = (await this.question('  Reason (optional): ', signal)).trim();
        return this.decide(r, { decision: 'reject', ...(reason ? { reason } : {}) });
      }
      this.write(seenWhole ? '  Please answer y, n, a or d.\n' : '  Please answer n or d.\n');
    }
  }

  /**
   * A call whose rule asks for a passkey is approved in the web inbox only, where the person's passkey signs for it:
   * here it may be rejected (that needs no passkey), or left to the inbox, so the questions after it go on.
   */
  private async converseForPasskey(r: ApprovalRequest, signal: AbortSignal): Promise<void> {
    const card = this.decisions.cardUrl?.(r.id);
    const where = card ? `approve in the inbox: ${card}` : `approve tool call ${r.id} in the web inbox`;
    this.write(`  needs a passkey — ${where}\n`);
    for (;;) {
      const answer = (await this.question('  [n] reject / [s]kip, leave it to the inbox / [d]etails: ', signal))
        .trim()
        .toLowerCase();
      if (answer === 'd' || answer === 'details') {
        this.write(fullDetails(r, this.tty));
        continue;
      }
      if (answer === 's' || answer === 'skip') {
        this.write(`  → ${text(r.toolName)} ${r.id} left to the inbox; it waits there until someone decides it\n`);
        return;
      }
      if (answer === 'n' || answer === 'no') {
        const reason = (await this.question('  Reason (optional): ', signal)).trim();
        return this.decide(r, { decision: 'reject', ...(reason ? { reason } : {}) });
      }
      if (['y', 'yes', 'a', 'always'].includes(answer))
        this.write(`  This call needs a passkey, which this terminal cannot give: ${where}.\n`);
      else this.write('  Please answer n, s or d.\n');
    }
  }

  private async decide(r: ApprovalRequest, input: TerminalDecision): Promise<void> {
    this.answered.add(r.id);
    try {
      const call = await this.decisions.decide(r.id, input);
      const why =
        'reason' in input && input.reason
          ? ` (${text(input.reason)})`
          : input.decision === 'always_allow'
            ? ` (always allowed in scope ${input.scope})`
            : '';
      this.write(`  → ${text(call.toolName)} ${call.id} ${call.status}${why}\n`);
    } catch (e) {
      const err = e as Error & { code?: string };
      this.write(`  ! ${text(err.code ? `${err.code}: ${err.message}` : err.message)}\n`);
    }
  }

  private question(prompt: string, signal: AbortSignal): Promise<string> {
    this.rl ??= this.openReadline();
    return this.rl.question(prompt, { signal });
  }

  private openReadline(): Interface {
    const rl = createInterface({ input: this.io.input, output: this.io.output, terminal: !!this.io.input.isTTY });
    // readline takes Ctrl-C from the terminal: hand it back to the process, which stops the server cleanly.
    rl.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
    return rl;
  }

  /** A terminal gets a style reset before the arguments (text on a pipe is left plain). */
  private get tty(): boolean {
    return !!(this.io.output as { isTTY?: boolean }).isTTY;
  }

  private write(s: string): void {
    this.io.output.write(s);
  }
}

function describe(o: ApprovalOutcome): string {
  if (o.outcome === 'expired') return 'expired';
  const who = text(o.by.name ?? o.by.id);
  return `${o.outcome} by ${who}${o.by.via && o.by.via !== 'system' ? ` via ${text(o.by.via)}` : ''}${o.reason ? ` (${text(o.reason)})` : ''}`;
}

/** The most lines of a preview the summary shows; a longer one is shown whole by d before it may be approved. */
const SUMMARY_PREVIEW_LINES = 8;

/** The most characters of arguments the summary shows; longer ones are shown only in the details. */
const SUMMARY_ARGUMENTS_MAX = 200;

/** Ends any style left on: what follows is the terminal's own text, whatever came before. */
const RESET = '\x1b[0m';
const PAINT = {
  green: (s: string) => `\x1b[32m${s}\x1b[39m`,
  red: (s: string) => `\x1b[31m${s}\x1b[39m`,
  dim: (s: string) => `\x1b[2m${s}\x1b[22m`,
};
const PLAIN = { green: (s: string) => s, red: (s: string) => s, dim: (s: string) => s };

/** Every string in it came from the agent, its user or a policy: each goes through `text`, the arguments `safeJson`. */
function summary(r: ApprovalRequest, queued: number, tty: boolean): string {
  const user = r.conversation.user;
  const lines = [
    '',
    `── Approval requested ${queued ? `(${queued} more waiting) ` : ''}${'─'.repeat(40)}`,
    `  ${text(r.toolName)}  ${r.id}`,
    `  agent ${text(r.conversation.agentId)}${user ? `, for ${text(user.name ?? user.id)}` : ''}${r.conversation.title ? `, in "${text(r.conversation.title)}"` : ''}`,
    `  policy: ${r.policy.level} — ${text(r.policy.reason)}`,
  ];
  if (r.reason) lines.push(`  why: ${text(r.reason)}`);
  const display = r.display as { title?: string; summary?: string } | undefined;
  if (display?.summary || display?.title)
    lines.push(
      `  ${[display.title, display.summary]
        .filter(Boolean)
        .map((s) => text(s))
        .join(' — ')}`,
    );
  // The preview (agent text, cleaned line by line; a diff coloured on a terminal), before the arguments.
  if (r.preview)
    lines.push(...previewLines(r.preview, tty ? PAINT : PLAIN, SUMMARY_PREVIEW_LINES).map((l) => `  ${l}`));
  // Whether they fit is decided on what is printed (the escapes safeJson adds count).
  const args = safeJson(r.arguments);
  lines.push(
    args.length > SUMMARY_ARGUMENTS_MAX
      ? `${tty ? RESET : ''}  arguments too long to show here: ${args.length} characters (d shows them all)`
      : `${tty ? RESET : ''}  arguments: ${args}`,
  );
  if (r.approval) lines.push(`  expires ${r.approval.expiresAt}`);
  const quorum = r.approval?.quorum;
  if (quorum)
    lines.push(
      `  approvals: ${quorum.approvedBy.length} of ${quorum.needed}${quorum.approvedBy.length ? ` (${quorum.approvedBy.map((x) => text(x.name ?? x.id)).join(', ')})` : ''}`,
    );
  return `${lines.join('\n')}\n`;
}

function fullDetails(r: ApprovalRequest, tty: boolean): string {
  const { tenantId: _tenant, ...view } = r;
  return `${tty ? RESET : ''}${safeJson(view, 2)
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')}\n`;
}
