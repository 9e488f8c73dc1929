import { allPages } from '@tollgate/sdk';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cardPath } from '../../../domain/conversation/conversation.errors';
import { ApiClient, CliError, EXIT, ProblemError, type Approval } from './api-client';
import { describeEnding, ENDING_EVENTS, followEvents, type StreamEvent } from './event-stream';
import { oneLine, timeLeft } from './format';
import { oneLineText as clean, safeJson } from '../safe-text';
import { needsPasskey, passkeyCardUrl } from './passkey-link';
import { reasonFrom, reasonMenu, RuleDecision, ruleRefusal } from './rule-choices';
import { answerText, fieldLabel, parseAnswer, previewLines, promptFields } from './schema-prompts';
import { previewGate, previewPage } from './preview-pager';

const ESC = '\x1b';
const CSI = `${ESC}[`;
const ALT_ON = `${CSI}?1049h`;
const ALT_OFF = `${CSI}?1049l`;
const HIDE_CURSOR = `${CSI}?25l`;
const SHOW_CURSOR = `${CSI}?25h`;
const CLEAR = `${CSI}H${CSI}2J`;
const RESET = `${CSI}0m`;
const bold = (s: string) => `${CSI}1m${s}${CSI}22m`;
const dim = (s: string) => `${CSI}2m${s}${CSI}22m`;
const inverse = (s: string) => `${CSI}7m${s}${CSI}27m`;
const color = (n: number, s: string) => `${CSI}${n}m${s}${CSI}39m`;
const green = (s: string) => color(32, s);
const red = (s: string) => color(31, s);
const yellow = (s: string) => color(33, s);
/** The most characters of a call's arguments a list row shows; longer ones are cut, and approved from the details. */
const ROW_ARGUMENTS_MAX = 200;

type Prompt =
  | { kind: 'text'; label: string; buffer: string; submit(text: string): void }
  | { kind: 'key'; label: string; yes(): void }
  /** One key among several, each its own action; any other key cancels. */
  | { kind: 'choice'; label: string; choices: Record<string, () => void> };

interface Io {
  input: NodeJS.ReadStream;
  output: NodeJS.WriteStream;
}

/**
 * `tollgate inbox`: the pending calls the caller may decide, kept live from the event stream, decided with
 * single keys. No TUI framework: raw-mode stdin, the alternate screen and a full redraw on each change.
 */
export async function runInbox(
  api: ApiClient,
  io: Io = { input: process.stdin, output: process.stdout },
): Promise<void> {
  if (!io.input.isTTY || !io.output.isTTY) {
    throw new CliError(
      'inbox is interactive and needs a terminal; in scripts use `tollgate pending --json`, `tollgate approve|reject <id>`',
      EXIT.usage,
    );
  }
  // Fail early, as the other commands do, when the server is unreachable or the token is refused.
  const first = await api.approvals();
  await new Inbox(api, io, first).run();
}

class Inbox {
  private items: Approval[];
  private selected = 0;
  private view: 'list' | 'details' = 'list';
  /** Previews paged whole (`<call>:<digest>`): a call whose preview does not fit the details is approved after. */
  private readonly pagedPreviews = new Set<string>();
  private prompt?: Prompt;
  private notices: string[] = [];
  private conn = 'connecting…';
  private readonly ended = new Set<string>();
  private readonly drafts = new Map<string, string>();
  private readonly destructiveTools = new Set<string>();
  private readonly knownTools = new Set<string>();
  /** Registered tools' input schemas: `e` then asks field by field. */
  private readonly schemas = new Map<string, unknown>();
  private refreshTimer?: NodeJS.Timeout;
  private refreshing?: Promise<void>;
  private refreshAgain = false;
  private ticker?: NodeJS.Timeout;
  private stream?: { close(): void };
  private done!: () => void;
  private failed!: (e: Error) => void;
  private suspended = false;
  private readonly who: string;

  constructor(
    private readonly api: ApiClient,
    private readonly io: Io,
    first: Approval[],
  ) {
    this.items = first;
    this.who = whoAmI(api.conn.token);
  }

  run(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.done = resolve;
      this.failed = reject;
      this.enterScreen();
      this.io.input.on('data', this.onKeys);
      this.io.output.on('resize', this.render);
      this.ticker = setInterval(() => this.render(), 1000);
      void this.loadTools();
      this.stream = followEvents(this.api, {
        onOpen: (again) => {
          this.conn = 'live';
          if (again) this.note(dim('reconnected; caught up'));
          this.scheduleRefresh(0);
        },
        onEvent: (e) => this.onEvent(e),
        onDown: (reason, ms) => {
          this.conn = `reconnecting in ${Math.round(ms / 1000)}s (${clean(reason)})`;
          this.render();
        },
        onFatal: (e) => this.quit(e),
      });
      this.render();
    });
  }

  // ── live updates ────────────────────────────────────────────────────────────

  private onEvent(e: StreamEvent): void {
    if (e.type === 'ApprovalRequested') return this.scheduleRefresh(50);
    if (!(e.type in ENDING_EVENTS) || !e.toolCallId) return;
    const id = e.toolCallId;
    this.ended.add(id);
    const item = this.items.find((i) => i.id === id);
    if (!item) return;
    this.remove(id);
    this.note(
      `${e.type === 'ToolCallApproved' ? green('✓') : e.type === 'ToolCallRejected' ? red('✗') : yellow('•')} ${clean(item.toolName)} ${dim(id)} ${describeEnding(e)}`,
    );
  }

  private scheduleRefresh(ms: number): void {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => void this.refresh(), ms);
  }

  private async refresh(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = (async () => {
      try {
        const fresh = (await this.api.approvals()).filter((a) => !this.ended.has(a.id));
        const before = new Set(this.items.map((i) => i.id));
        const current = this.items[this.selected]?.id;
        for (const a of fresh)
          if (!before.has(a.id))
            this.note(`${yellow('+')} new: ${clean(a.toolName)} ${dim(a.id)} from ${clean(a.conversation.agentId)}`);
        this.items = fresh;
        const at = this.items.findIndex((i) => i.id === current);
        this.selected = at >= 0 ? at : Math.min(this.selected, Math.max(0, this.items.length - 1));
        if (this.items.some((i) => !this.knownTools.has(i.toolName))) await this.loadTools();
      } catch (e) {
        if (e instanceof ProblemError && e.status < 500 && e.status !== 429) return this.quit(e);
        this.note(red(`✗ could not refresh: ${clean((e as Error).message)}`));
      }
      this.render();
    })();
    await this.refreshing;
    this.refreshing = undefined;
    if (this.refreshAgain) {
      this.refreshAgain = false;
      void this.refresh();
    }
  }

  private async loadTools(): Promise<void> {
    try {
      const tools = await this.api.call((t) => allPages((cursor) => t.listTools({ limit: 1000, cursor }), Infinity));
      for (const t of tools) {
        this.knownTools.add(t.name);
        if (t.destructive) this.destructiveTools.add(t.name);
        if (t.inputSchema) this.schemas.set(t.name, t.inputSchema);
      }
      for (const i of this.items) this.knownTools.add(i.toolName); // unregistered: do not ask again for them
    } catch {
      /* the flags only decide whether approving asks for a second key */
    }
  }

  private remove(id: string): void {
    const at = this.items.findIndex((i) => i.id === id);
    if (at < 0) return;
    const wasCurrent = at === this.selected;
    this.items.splice(at, 1);
    if (at < this.selected || this.selected >= this.items.length) this.selected = Math.max(0, this.selected - 1);
    if (wasCurrent) {
      this.prompt = undefined;
      this.view = 'list';
    }
    this.render();
  }

  // ── keys ────────────────────────────────────────────────────────────────────

  private readonly onKeys = (chunk: Buffer | string): void => {
    if (this.suspended) return;
    for (const key of splitKeys(chunk.toString('utf8'))) this.onKey(key);
  };

  private onKey(key: string): void {
    if (key === '\x03') return this.quit(); // Ctrl-C
    if (this.prompt) return this.onPromptKey(this.prompt, key);
    const item = this.items[this.selected];
    switch (key) {
      case 'q':
        return this.quit();
      case `${CSI}A`:
      case `${ESC}OA`:
      case 'k':
        this.selected = Math.max(0, this.selected - 1);
        return this.render();
      case `${CSI}B`:
      case `${ESC}OB`:
      case 'j':
        this.selected = Math.min(Math.max(0, this.items.length - 1), this.selected + 1);
        return this.render();
      case '\r':
      case '\n':
        this.view = this.view === 'list' && item ? 'details' : 'list';
        return this.render();
      case ESC:
      case '\x7f':
      case 'h':
        this.view = 'list';
        return this.render();
      case 'g':
        return void this.refresh();
      case 'a':
        return item && this.ruleAllows(item, 'approve') ? this.approve(item) : undefined;
      case 'r':
        return item && this.ruleAllows(item, 'reject') ? this.reject(item) : undefined;
      case 'e':
        return item && this.ruleAllows(item, 'edit') ? this.editFields(item) : undefined;
      case 'E':
        return item && this.ruleAllows(item, 'edit') ? this.edit(item) : undefined;
      case 'A':
        return item && this.ruleAllows(item, 'always_allow') ? this.alwaysAllow(item) : undefined;
      default:
        return undefined;
    }
  }

  private onPromptKey(p: Prompt, key: string): void {
    if (p.kind === 'choice') {
      this.prompt = undefined;
      const chosen = p.choices[key];
      if (chosen) chosen();
      else this.note(dim('cancelled'));
      return this.render();
    }
    if (p.kind === 'key') {
      this.prompt = undefined;
      if (key === 'y' || key === 'Y') p.yes();
      else this.note(dim('cancelled'));
      return this.render();
    }
    if (key === '\r' || key === '\n') {
      this.prompt = undefined;
      p.submit(p.buffer.trim());
    } else if (key === ESC) {
      this.prompt = undefined;
      this.note(dim('cancelled'));
    } else if (key === '\x7f' || key === '\b') {
      p.buffer = [...p.buffer].slice(0, -1).join('');
    } else if (!key.startsWith(ESC) && key >= ' ') {
      p.buffer += key;
    }
    this.render();
  }

  // ── actions ─────────────────────────────────────────────────────────────────

  /** A destructive tool or a manual-level call wants a second key before it is approved. */
  private needsConfirm(a: Approval): string | undefined {
    if (a.policy.level === 'manual') return 'manual approval';
    if (
      a.policy.toolFlags?.destructive ||
      this.destructiveTools.has(a.toolName) ||
      /\bdestructive\b/.test(a.policy.reason)
    )
      return 'destructive';
    return undefined;
  }

  /**
   * Whether the screen shows `a`'s arguments whole right now: in its row of the list, or in its details. Nothing is
   * approved on arguments cut to fit: what falls off would be the agent's choice.
   */
  private argumentsShownWhole(a: Approval): boolean {
    const { width, room } = this.layout();
    if (this.view === 'details') {
      // The arguments end the details (a blank line and the key help follow); each of their lines must fit as well.
      const shown = details(a, this.needsConfirm(a)).length;
      const argLines = safeJson(a.arguments, 2).split('\n');
      return shown <= room && argLines.every((l) => visibleLength(`  ${l}`) <= width);
    }
    return safeJson(a.arguments).length <= ROW_ARGUMENTS_MAX && visibleLength(this.row(a, false)) <= width;
  }

  /**
   * Approve and Always allow wait for a view that shows the arguments whole: the details, else the editor or the card.
   * A call that needs a passkey is approved in the web inbox only (the terminal cannot sign): the note says where.
   */
  private mayApprove(a: Approval): boolean {
    if (needsPasskey(a)) {
      this.note(yellow(`• ${this.passkeyHint(a)}`));
      this.render();
      return false;
    }
    if (!this.previewShown(a)) return false;
    if (this.argumentsShownWhole(a)) return true;
    if (this.view === 'list') {
      this.view = 'details';
      if (this.argumentsShownWhole(a)) {
        this.note(yellow('• the arguments did not fit the list: here they are whole; press the key again to decide'));
        this.render();
        return false;
      }
    }
    // Two notes, each short enough for a line: the card's address must not be the part cut off.
    this.note(
      yellow(
        `• arguments too long to show here: ${safeJson(a.arguments).length} characters — e shows them whole in your editor (then y approves)`,
      ),
    );
    this.note(yellow(`  or open the full card: ${this.api.conn.url}${cardPath(a.id)}`));
    this.render();
    return false;
  }

  /**
   * Whether the person has been shown the call's preview whole (the receipt binds it): in the details view when it
   * fits there, else paged through $PAGER (less) first; an image is approved in the web inbox only. When not yet,
   * shows it (or says where) and the key is pressed again to decide.
   */
  private previewShown(a: Approval): boolean {
    const key = `${a.id}:${a.preview?.digest ?? ''}`;
    const gate = previewGate(a.preview, {
      paged: this.pagedPreviews.has(key),
      view: this.view,
      width: this.layout().width,
    });
    if (gate === 'shown') return true;
    if (gate === 'image') {
      this.note(yellow('• the preview is an image, which a terminal cannot show: approve in the web inbox'));
      this.note(yellow(`  ${this.api.conn.url}${cardPath(a.id)}`));
    } else if (gate === 'details') {
      this.view = 'details';
      this.note(yellow('• here is the preview whole; press the key again to decide'));
    } else if (this.page(previewPage(a.preview!, a.toolName))) {
      this.pagedPreviews.add(key);
      this.note(yellow('• you were shown the whole preview; press the key again to decide'));
    }
    this.render();
    return false;
  }

  /** Shows `text` in $PAGER (less by default) on the whole terminal; whether the pager ran and ended well. */
  private page(text: string): boolean {
    const pager = process.env.PAGER || 'less';
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-preview-'));
    const file = join(dir, 'preview.txt');
    writeFileSync(file, text, { mode: 0o600 });
    this.suspend();
    try {
      const r = spawnSync(`${pager} ${shellQuote(file)}`, { shell: true, stdio: 'inherit' });
      if (r.error || r.status !== 0)
        throw new Error(r.error?.message ?? `${pager} exited with ${r.status ?? r.signal}`);
      return true;
    } catch (e) {
      this.note(red(`✗ pager: ${clean((e as Error).message)} — the preview was not shown: approve in the web inbox`));
      return false;
    } finally {
      rmSync(dir, { recursive: true, force: true });
      this.resume();
    }
  }

  /** Where a call that needs a passkey is approved. */
  private passkeyHint(a: Approval): string {
    return `needs a passkey — approve in the inbox: ${passkeyCardUrl(this.api.conn.url, a.id)}`;
  }

  private approve(a: Approval): void {
    if (!this.mayApprove(a)) return;
    const why = this.needsConfirm(a);
    if (!why) return void this.decide(a, { decision: 'approve' });
    this.prompt = {
      kind: 'key',
      label: `Approve ${bold(clean(a.toolName))} (${why})? ${bold('y')} to confirm, any other key cancels`,
      yes: () => void this.decide(a, { decision: 'approve' }),
    };
    this.render();
  }

  /** Whether the call's rule allows `d` (rule-choices.ts); when not, says so and offers nothing. */
  private ruleAllows(a: Approval, d: RuleDecision): boolean {
    const why = ruleRefusal(a, d);
    if (!why) return true;
    this.note(yellow(`  ${why}`));
    this.render();
    return false;
  }

  private reject(a: Approval): void {
    // With the rule's reasons: a numbered choice (own words only where the rule allows them).
    const menu = reasonMenu(a);
    this.prompt = {
      kind: 'text',
      label: menu
        ? `Reject ${bold(clean(a.toolName))} — reason: ${clean(menu)} (enter to send, esc cancels): `
        : `Reject ${bold(clean(a.toolName))} — reason (enter to send, esc cancels): `,
      buffer: '',
      submit: (typed) => {
        const r = reasonFrom(a, typed);
        if ('error' in r) {
          this.note(red(`✗ ${r.error}`));
          return void this.render();
        }
        void this.decide(a, { decision: 'reject', ...(r.reason ? { reason: r.reason } : {}) });
      },
    };
    this.render();
  }

  /** Always allow: approve, and let this tool run without asking from now on, in a scope the key picks (as the web's form). */
  private alwaysAllow(a: Approval): void {
    if (!this.mayApprove(a)) return;
    if (a.policy.level === 'manual') {
      this.note(yellow('• a manual call is approved one at a time: no standing grant (press a to approve it)'));
      return this.render();
    }
    const grant = (scope: 'conversation' | 'agent' | 'tenant') => () =>
      void this.decide(a, { decision: 'always_allow', scope });
    this.prompt = {
      kind: 'choice',
      label: `Always allow ${bold(clean(a.toolName))} from now on in: ${bold('c')} this conversation · ${bold('g')} this agent · ${bold('t')} the tenant (agent, tenant: admins) — any other key cancels`,
      choices: { c: grant('conversation'), g: grant('agent'), t: grant('tenant') },
    };
    this.render();
  }

  /**
   * The tool's input schema asks field by field (one line each, the current value to change or keep with enter);
   * objects and arrays keep their values (E edits all as JSON). Then approves with them after a `y`; the server
   * checks them against the schema (400 arguments_invalid, shown as a note). Without a schema: the editor.
   */
  private editFields(a: Approval): void {
    if (needsPasskey(a)) return void this.mayApprove(a);
    if (!this.previewShown(a)) return; // an edit is approved: its preview is read whole first
    const fields = promptFields(this.schemas.get(a.toolName));
    if (fields.length === 0) return this.edit(a);
    const ask = (i: number, draft: Record<string, unknown>): void => {
      if (!this.items.some((x) => x.id === a.id)) return this.render(); // decided elsewhere meanwhile: already noted
      if (i === fields.length) {
        this.prompt = {
          kind: 'key',
          label: `Approve ${bold(clean(a.toolName))} with ${oneLine(draft, 60)}? ${bold('y')} to confirm, any other key cancels`,
          yes: () => void this.decide(a, { decision: 'approve', arguments: draft }),
        };
        return this.render();
      }
      const f = fields[i];
      this.prompt = {
        kind: 'text',
        label: fieldLabel(f, i, fields.length),
        buffer: answerText(draft[f.name]),
        submit: (text) => {
          const parsed = parseAnswer(f, text);
          if (!parsed.ok) {
            this.note(red(`✗ ${clean(f.name)}: ${parsed.error}`));
            return ask(i, draft);
          }
          const next = { ...draft };
          if (parsed.value === undefined) delete next[f.name];
          else next[f.name] = parsed.value;
          ask(i + 1, next);
        },
      };
      this.render();
    };
    this.note(
      dim(`• editing ${clean(a.toolName)} field by field (enter keeps a value, esc cancels; E edits all as JSON)`),
    );
    ask(0, { ...a.arguments });
  }

  /** Opens the arguments in $VISUAL/$EDITOR (a temp file), checks the JSON, then approves with them after a `y`. */
  private edit(a: Approval): void {
    if (needsPasskey(a)) return void this.mayApprove(a); // edited arguments are approved: only in the web inbox
    if (!this.previewShown(a)) return; // and so is a preview, read whole first
    const editor = process.env.VISUAL || process.env.EDITOR || 'vi';
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-edit-'));
    const file = join(dir, `${a.id}.json`);
    const original = `${JSON.stringify(a.arguments, null, 2)}\n`;
    writeFileSync(file, this.drafts.get(a.id) ?? original, { mode: 0o600 });
    let text: string;
    this.suspend();
    try {
      const r = spawnSync(`${editor} ${shellQuote(file)}`, { shell: true, stdio: 'inherit' });
      if (r.error || r.status !== 0)
        throw new Error(r.error?.message ?? `${editor} exited with ${r.status ?? r.signal}`);
      text = readFileSync(file, 'utf8');
    } catch (e) {
      this.resume();
      this.note(red(`✗ editor: ${clean((e as Error).message)}`));
      return this.render();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    this.resume();
    if (!this.items.some((i) => i.id === a.id)) return this.render(); // decided elsewhere meanwhile: already noted
    let edited: unknown;
    try {
      edited = JSON.parse(text);
      if (!edited || typeof edited !== 'object' || Array.isArray(edited))
        throw new Error('the arguments must be a JSON object');
    } catch (e) {
      this.drafts.set(a.id, text);
      this.note(red(`✗ not valid: ${clean((e as Error).message)} — press e to fix it`));
      return this.render();
    }
    this.drafts.delete(a.id);
    if (JSON.stringify(edited) === JSON.stringify(a.arguments)) {
      // Read whole in the editor: they may be approved as they are (the way to approve arguments too long to show).
      this.prompt = {
        kind: 'key',
        label: `Arguments unchanged. Approve ${bold(clean(a.toolName))} with them as they are? ${bold('y')} to confirm, any other key cancels`,
        yes: () => void this.decide(a, { decision: 'approve' }),
      };
      return this.render();
    }
    const args = edited as Record<string, unknown>;
    this.prompt = {
      kind: 'key',
      label: `Approve ${bold(clean(a.toolName))} with ${oneLine(args, 60)}? ${bold('y')} to confirm, any other key cancels`,
      yes: () => void this.decide(a, { decision: 'approve', arguments: args }),
    };
    this.render();
  }

  private async decide(
    a: Approval,
    body: {
      decision: 'approve' | 'reject' | 'always_allow';
      reason?: string;
      arguments?: Record<string, unknown>;
      scope?: 'conversation' | 'agent' | 'tenant';
    },
  ): Promise<void> {
    const verb = body.decision === 'reject' ? 'rejecting' : 'approving';
    this.note(dim(`${verb} ${clean(a.toolName)} ${a.id}…`));
    this.render();
    try {
      const call = await this.api.decide(a.id, body);
      const q = call.approval?.quorum;
      if (call.status === 'pending' && q) {
        // An approval towards a quorum: the call stays in the list, now "1 of 2".
        this.items = this.items.map((i) => (i.id === call.id ? { ...i, ...call } : i));
        this.note(
          `${green('✓')} ${clean(a.toolName)} ${dim(a.id)} approval recorded: ${q.approvedBy.length} of ${q.needed}`,
        );
        return this.render();
      }
      this.ended.add(a.id);
      this.remove(a.id);
      const mark = call.status === 'approved' ? green('✓') : red('✗');
      this.note(
        `${mark} ${clean(a.toolName)} ${dim(a.id)} ${call.status} by you via cli${body.arguments ? ' with edited arguments' : ''}${body.reason ? ` (${clean(body.reason)})` : ''}`,
      );
    } catch (e) {
      if (e instanceof ProblemError && e.problem.code === 'already_decided') {
        const d = e.problem.decision;
        this.ended.add(a.id);
        this.remove(a.id);
        this.note(
          `${yellow('•')} ${clean(a.toolName)} ${dim(a.id)} was already ${d ? `${d.outcome} by ${clean(d.by.name ?? d.by.id)} via ${clean(d.by.via)}` : 'decided'}`,
        );
      } else {
        this.note(red(`✗ ${clean((e as Error).message)}`));
      }
    }
    this.render();
  }

  // ── screen ──────────────────────────────────────────────────────────────────

  private note(line: string): void {
    const stamp = new Date().toTimeString().slice(0, 8);
    this.notices.push(`${dim(stamp)} ${line}`);
    if (this.notices.length > 6) this.notices.shift();
  }

  private enterScreen(): void {
    this.io.input.setRawMode(true);
    this.io.input.resume();
    this.io.output.write(ALT_ON + HIDE_CURSOR);
  }

  private leaveScreen(): void {
    this.io.output.write(SHOW_CURSOR + ALT_OFF);
    this.io.input.setRawMode(false);
    this.io.input.pause();
  }

  private suspend(): void {
    this.suspended = true;
    this.leaveScreen();
  }

  private resume(): void {
    this.suspended = false;
    this.enterScreen();
  }

  private quit(err?: Error): void {
    clearInterval(this.ticker);
    clearTimeout(this.refreshTimer);
    this.stream?.close();
    this.io.input.off('data', this.onKeys);
    this.io.output.off('resize', this.render);
    this.leaveScreen();
    if (err) this.failed(err);
    else this.done();
  }

  /**
   * The screen's width, the footer (a blank line, the key help, notices and prompt, wrapped to the width), and the
   * lines left between the header and the footer. A terminal that reports no size (0×0) counts as 100×30.
   */
  private layout(): { width: number; room: number; footer: string[] } {
    const width = Math.max(40, this.io.output.columns || 100);
    const height = Math.max(10, this.io.output.rows || 30);
    const item = this.items[this.selected];
    const passkey = item && needsPasskey(item);
    // The selected call's own keys: one that needs a passkey has none to approve here, and says where instead.
    const keys = passkey ? PASSKEY_KEYS : LIST_KEYS;
    const footer = [
      '',
      ...wrapItems(keys, width).map(dim),
      ...(passkey ? wrapWords(yellow(this.passkeyHint(item)), width) : []),
      ...this.notices.flatMap((n) => wrapWords(n, width)),
    ];
    if (this.prompt)
      footer.push(
        ...wrapWords(
          this.prompt.kind === 'text' ? `${this.prompt.label}${clean(this.prompt.buffer)}█` : this.prompt.label,
          width,
        ),
      );
    // The header and a blank line above; the footer below.
    return { width, footer, room: Math.max(3, height - 2 - footer.length) };
  }

  /** A call's row in the list, as wide as it comes (the screen cuts it). */
  private row(a: Approval, selected: boolean): string {
    // Agent text is cleaned before it is cut or padded, so the widths are those of what the screen shows.
    const who = a.conversation.user ? clean(a.conversation.user.name ?? a.conversation.user.id) : '-';
    const title = clean(a.conversation.title ?? a.conversationId);
    return `${selected ? '›' : ' '} ${clean(a.toolName).padEnd(18)} ${a.policy.level.padEnd(7)} ${timeLeft(a.approval?.expiresAt).padEnd(13)} ${title.slice(0, 24).padEnd(24)} ${who.slice(0, 12).padEnd(12)} ${clean(a.conversation.agentId).slice(0, 14).padEnd(14)} ${oneLine(a.arguments, ROW_ARGUMENTS_MAX)}`;
  }

  private readonly render = (): void => {
    if (this.suspended) return;
    const { width, footer, room } = this.layout();
    const fit = (s: string) => truncate(s, width);
    const header = `${bold('Tollgate inbox')} · ${clean(this.who)} @ ${this.api.conn.url} · ${this.items.length} pending · ${this.conn === 'live' ? green('● live') : yellow(this.conn)}`;
    const lines: string[] = [header, ''];
    const item = this.items[this.selected];
    if (this.view === 'details' && item) {
      const help = wrapItems(needsPasskey(item) ? PASSKEY_DETAILS_KEYS : DETAILS_KEYS, width).map(dim);
      lines.push(...[...details(item, this.needsConfirm(item)), '', ...help].slice(0, room));
    } else if (!this.items.length) {
      lines.push(dim('Nothing waiting for you. New requests appear here as they arrive.'));
    } else {
      lines.push(
        dim(
          `  ${'TOOL'.padEnd(18)} ${'LEVEL'.padEnd(7)} ${'EXPIRES'.padEnd(13)} ${'CONVERSATION'.padEnd(24)} ${'USER'.padEnd(12)} ${'AGENT'.padEnd(14)} ARGUMENTS`,
        ),
      );
      const start = Math.min(
        Math.max(0, this.selected - Math.floor((room - 1) / 2)),
        Math.max(0, this.items.length - (room - 1)),
      );
      for (const [n, a] of this.items.slice(start, start + room - 1).entries()) {
        const i = start + n;
        const row = this.row(a, i === this.selected);
        lines.push(i === this.selected ? inverse(truncate(row, width)) : row);
      }
    }
    this.io.output.write(CLEAR + [...lines, ...footer].map(fit).join('\r\n'));
  };
}

/** Every string from the call goes through `clean` (one line, no control characters), the arguments `safeJson`. */
function details(a: Approval, confirm: string | undefined): string[] {
  const user = a.conversation.user;
  const out = [
    `${bold(clean(a.toolName))}  ${dim(a.id)}${a.externalId ? dim(` (agent's id ${clean(a.externalId)})`) : ''}`,
    `Conversation  ${a.conversation.title ? `"${clean(a.conversation.title)}" ` : ''}${dim(clean(a.conversationId))}`,
    `User          ${user ? `${clean(user.name ?? user.id)} (${clean(user.id)})` : '-'}      Agent  ${clean(a.conversation.agentId)}`,
    `Policy        ${a.policy.level}${confirm ? yellow(` · ${confirm}`) : ''} — ${clean(a.policy.reason)} (rule ${a.policy.rule ?? '-'}, version ${a.policy.policyVersion})`,
    `Approvers     ${a.approval?.approvers.map((x) => clean(x)).join(', ') ?? '-'}      Expires ${a.approval?.expiresAt ?? '-'} (${timeLeft(a.approval?.expiresAt)})`,
  ];
  if (a.policy.shadow)
    out.push(
      dim(
        `Shadow        rule ${a.policy.shadow.rule} would have: ${a.policy.shadow.level} — ${clean(a.policy.shadow.reason)}`,
      ),
    );
  const quorum = a.approval?.quorum;
  if (quorum)
    out.push(
      `Approvals     ${quorum.approvedBy.length} of ${quorum.needed}${quorum.of ? ` (from ${quorum.of.map((x) => clean(x)).join(', ')})` : ''}${quorum.approvedBy.length ? `: ${quorum.approvedBy.map((x) => clean(x.name ?? x.id)).join(', ')}` : ''}`,
    );
  if (a.approval?.selfApproval === false) out.push(`Separation    the end user and the agent's owner may not approve`);
  if (needsPasskey(a)) out.push(`Passkey       each approval needs a passkey: approve in the web inbox`);
  if (a.reason) out.push(`Agent's reason ${clean(a.reason)}`);
  if (a.confidence !== undefined || a.estimatedCost !== undefined)
    out.push(`Confidence    ${a.confidence ?? '-'}      Estimated cost ${a.estimatedCost ?? '-'}`);
  if (a.display?.title || a.display?.summary)
    out.push(
      `Display       ${[a.display.title, a.display.summary]
        .map((x) => clean(x))
        .filter(Boolean)
        .join(' — ')}`,
    );
  for (const f of a.display?.fields ?? []) out.push(`  ${clean(f.label)}: ${clean(f.value)}`);
  if (a.preview) out.push(...previewLines(a.preview, { green, red, dim }));
  out.push(
    // Whatever style the lines above left on ends here: the arguments are shown as they are.
    `${RESET}Arguments`,
    ...safeJson(a.arguments, 2)
      .split('\n')
      .map((l) => `  ${l}`),
  );
  return out;
}

/** The keys, as the footer lists them (wrapped between keys to the screen's width, so "q quit" is never cut off). */
const LIST_KEYS = [
  '↑/↓ move',
  'enter details',
  'a approve',
  'A always allow',
  'r reject',
  'e edit arguments',
  'g refresh',
  'q quit',
];
const DETAILS_KEYS = ['a approve', 'A always allow', 'r reject', 'e edit arguments', 'enter/esc back'];
/** The keys for a call that needs a passkey: no approving here (the web inbox's passkey signs), rejecting needs none. */
const PASSKEY_KEYS = ['↑/↓ move', 'enter details', 'r reject', 'g refresh', 'q quit'];
const PASSKEY_DETAILS_KEYS = ['r reject', 'enter/esc back'];

/** Plain items joined with " · ", in as many lines of at most `width` characters as they take. */
export function wrapItems(items: string[], width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const item of items) {
    if (line && line.length + 3 + item.length > width) {
      lines.push(line);
      line = item;
    } else {
      line = line ? `${line} · ${item}` : item;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** A line with ANSI styling, broken between words into lines of at most `width` visible characters where it can. */
export function wrapWords(s: string, width: number): string[] {
  const lines: string[] = [];
  let line: string | undefined;
  for (const word of s.split(' ')) {
    if (line === undefined) line = word;
    else if (visibleLength(line) > 0 && visibleLength(line) + 1 + visibleLength(word) > width) {
      lines.push(line);
      line = word;
    } else line = `${line} ${word}`;
  }
  lines.push(line ?? '');
  return lines;
}

/** One key per element: escape sequences (arrows) stay whole, everything else is one character. */
export function splitKeys(s: string): string[] {
  const keys: string[] = [];
  for (let i = 0; i < s.length;) {
    if (s[i] === ESC && (s[i + 1] === '[' || s[i + 1] === 'O') && i + 2 < s.length) {
      let j = i + 2;
      while (j < s.length && !/[A-Za-z~]/.test(s[j])) j++;
      keys.push(s.slice(i, j + 1));
      i = j + 1;
    } else {
      const cp = s.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      keys.push(ch);
      i += ch.length;
    }
  }
  return keys;
}

/** The visible characters of a line with the inbox's own ANSI styling (agent text reaches it cleaned of escapes). */
function visibleLength(s: string): number {
  return s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').length;
}

/** Cuts a line with ANSI styling to `width` visible characters. */
function truncate(s: string, width: number): string {
  let visible = 0;
  let out = '';
  for (let i = 0; i < s.length;) {
    if (s[i] === ESC) {
      const m = /^\x1b\[[0-9;?]*[A-Za-z]/.exec(s.slice(i));
      if (m) {
        out += m[0];
        i += m[0].length;
        continue;
      }
    }
    if (visible >= width) {
      i++;
      continue;
    }
    out += s[i];
    visible++;
    i++;
  }
  return out;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Who the token says we are, for the header only (the server checks the token; we just read it). */
function whoAmI(token: string): string {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as {
      sub?: string;
      name?: string;
      tenant?: string;
    };
    return `${claims.name ?? claims.sub ?? '?'}${claims.tenant && claims.tenant !== 'default' ? ` (${claims.tenant})` : ''}`;
  } catch {
    return 'you';
  }
}
