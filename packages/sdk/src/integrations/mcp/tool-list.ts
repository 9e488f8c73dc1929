/**
 * The gateway's tools: each upstream's as last listed, named, registered with Tollgate, and served to clients but
 * for those the policy denies outright. It follows the upstreams (`notifications/tools/list_changed`) and the
 * policy (read again on a timer), and says when what clients are served changed.
 */
import type { Tool as McpTool } from '@modelcontextprotocol/server';
import { TollgateError } from '../../errors.js';
import type { Tollgate } from '../../tollgate.js';
import type { PolicyRule } from '../../types.js';
import { type Log, messageOf } from './shared.js';
import { deniedTools, describedBy, type GatewayTool, nameTools, unmatchedRules } from './tools.js';
import { listUpstreamTools, type Upstream } from './upstreams.js';

/** The least time between two listings of an upstream's tools, however often it says they changed. */
const RELIST_GAP_MS = 1000;
/** How many tool names, in all, one upstream may have offered while the gateway runs (4 × MAX_TOOLS). */
const OWNED_NAMES_PER_UPSTREAM = 4000;
/** Tools registered with Tollgate at once. */
const REGISTER_AT_ONCE = 8;

export interface ToolListOptions {
  tollgate: Tollgate;
  upstreams: Map<string, Upstream>;
  /** Names no upstream tool may take (the built-in `ask_human` while it is on). */
  reserved: string[];
  /** Leave out the tools the policy denies outright. */
  hideDenied: boolean;
  log: Log;
  /** What clients are served changed: tell the sessions. */
  changed(): void;
}

export class ToolList {
  private exposed = new Map<string, GatewayTool>();
  private readonly registered = new Set<string>();
  /** Each upstream's tools as last listed, by upstream. */
  private readonly listed = new Map<string, McpTool[]>();
  /** Which upstream first offered each tool name: a name never moves to another upstream while the gateway runs. */
  private readonly owners = new Map<string, string>();
  /** Tools a rule of the policy last read denies outright. */
  private denied = new Set<string>();
  private rules: PolicyRule[] = [];
  private policyVersion: number | undefined;
  private policyTimer: ReturnType<typeof setTimeout> | undefined;
  /** Until start is over, changes are noted and followed after it. */
  private ready = false;
  private readonly changedAtStart = new Set<string>();
  /** Upstreams whose tools are to be listed again, and the one listing at a time that does it. */
  private readonly toRelist = new Set<string>();
  private relisting: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly o: ToolListOptions) {}

  /**
   * Lists every upstream's tools, names and registers them, and reads the policy (again every `policyRefreshMs`,
   * at least a second apart; 0: never). Throws a GatewayConfigError when two tools would share a name.
   */
  async start(policyRefreshMs: number): Promise<void> {
    for (const [name, tools] of await listUpstreamTools(this.o.upstreams)) this.listed.set(name, tools);
    await this.use(true);
    await this.readPolicy();
    if (this.o.hideDenied && policyRefreshMs > 0) this.readPolicyIn(Math.max(1000, policyRefreshMs));
    this.ready = true;
    for (const upstream of this.changedAtStart) this.upstreamChanged(upstream);
  }

  close(): void {
    this.closed = true;
    if (this.policyTimer) clearTimeout(this.policyTimer);
  }

  /** Every tool of the upstreams, by exposed name (those hidden from clients too). */
  get all(): GatewayTool[] {
    return [...this.exposed.values()];
  }

  /** The tools `tools/list` answers: all but those the policy denies outright, unless hiding is off. */
  get visible(): GatewayTool[] {
    return this.o.hideDenied ? this.all.filter((t) => !this.denied.has(t.name)) : this.all;
  }

  get(name: string): GatewayTool | undefined {
    return this.exposed.get(name);
  }

  /** Registers the tool unless that is done: one that could not be registered before is tried again here. */
  async ensureRegistered(tool: GatewayTool): Promise<void> {
    if (!this.registered.has(tool.name)) await this.register(tool);
  }

  /**
   * An upstream said its tools changed: they are listed again, one upstream at a time and at most once a second,
   * and sessions are told when what they are served changed.
   */
  upstreamChanged(upstream: string): void {
    if (this.closed) return;
    if (!this.ready) return void this.changedAtStart.add(upstream);
    if (this.toRelist.has(upstream)) return; // already waiting: that listing will see this change too
    this.toRelist.add(upstream);
    this.relisting = this.relisting
      .then(async () => {
        this.toRelist.delete(upstream);
        if (this.closed) return;
        const before = this.listed.get(upstream);
        if (!before) return;
        const served = this.served();
        try {
          const listed = await listUpstreamTools([[upstream, this.o.upstreams.get(upstream)!]]);
          this.listed.set(upstream, listed.get(upstream)!);
        } catch (e) {
          this.log('warn', `upstream ${upstream} said its tools changed, but listing them failed: ${messageOf(e)}`);
          return;
        }
        // Refused: dropped, so the next change of another upstream does not meet it again.
        if (!(await this.use(false))) this.listed.set(upstream, before);
        else if (this.served() !== served) this.o.changed();
      })
      .then(() => new Promise<void>((resolve) => setTimeout(resolve, RELIST_GAP_MS).unref?.()))
      .catch((e) => this.log('error', `following upstream ${upstream}'s tools failed: ${messageOf(e)}`));
  }

  /**
   * Names the listed tools and registers the new and changed ones. At start a name two tools would share stops the
   * gateway; later (an upstream changed its list) the new list is refused, logged, and the one before stays.
   */
  private async use(atStart: boolean): Promise<boolean> {
    const configs = new Map([...this.o.upstreams].map(([name, u]) => [name, u.config]));
    const listed = [...this.listed].flatMap(([upstream, tools]) => tools.map((tool) => ({ upstream, tool })));
    let tools: GatewayTool[];
    try {
      tools = nameTools(listed, configs, this.o.reserved);
    } catch (e) {
      if (atStart) throw e;
      this.log('error', `the upstreams' new tool list is not taken, the one before stays: ${messageOf(e)}`);
      return false;
    }
    const taken = tools.find((t) => (this.owners.get(t.name) ?? t.upstream) !== t.upstream);
    if (taken) {
      this.log(
        'error',
        `the upstreams' new tool list is not taken, the one before stays: ${taken.name} is upstream ${this.owners.get(taken.name)}'s tool, and upstream ${taken.upstream} now offers one of that name`,
      );
      return false;
    }
    // Names are kept for the gateway's life, so a server renaming its tools over and over must not grow them forever.
    const fresh = tools.filter((t) => !this.owners.has(t.name));
    const most = OWNED_NAMES_PER_UPSTREAM * this.o.upstreams.size;
    if (this.owners.size + fresh.length > most) {
      this.log(
        'error',
        `the upstreams' new tool list is not taken, the one before stays: the upstreams have offered more than ${most} tool names since the gateway started; restart it`,
      );
      return false;
    }
    for (const t of fresh) this.owners.set(t.name, t.upstream);
    const before = this.exposed;
    // Denied tools are known before the new list is: a tool a rule denies is never listed, not even for a moment.
    if (!atStart) this.denied = deniedTools(this.rules, tools);
    this.exposed = new Map(tools.map((t) => [t.name, t]));
    for (const t of tools)
      if (atStart && t.name !== t.upstreamName && !configs.get(t.upstream)!.namespace)
        this.log(
          'info',
          `tool ${JSON.stringify(t.upstreamName)} of upstream ${t.upstream} is called ${t.name} (Tollgate's tool names are [A-Za-z0-9_.:-])`,
        );
    // What Tollgate shows people must be what the upstream says now: a tool whose words or flags changed is
    // registered again (and counts as new until it is).
    const changed = tools.filter((t) => {
      const old = before.get(t.name);
      return !old || describedBy(old) !== describedBy(t) || JSON.stringify(old.flags) !== JSON.stringify(t.flags);
    });
    for (const t of changed) this.registered.delete(t.name);
    // A few at a time: a server that lists 1,000 new tools does not send Tollgate 1,000 requests at once.
    for (let i = 0; i < changed.length; i += REGISTER_AT_ONCE)
      await Promise.all(changed.slice(i, i + REGISTER_AT_ONCE).map((t) => this.register(t)));
    if (!atStart) {
      const gone = [...before.keys()].filter((name) => !this.exposed.has(name));
      const added = changed.filter((t) => !before.has(t.name)).map((t) => t.name);
      const redone = changed.filter((t) => before.has(t.name)).map((t) => t.name);
      this.log(
        'info',
        `the upstreams' tools changed: ${
          [
            added.length ? `new ${added.join(', ')}` : '',
            redone.length ? `changed ${redone.join(', ')}` : '',
            gone.length ? `gone ${gone.join(', ')}` : '',
          ]
            .filter(Boolean)
            .join('; ') || 'nothing Tollgate sees'
        }`,
      );
      // A rule written for a new tool's own name may miss the name Tollgate sees, as at start.
      for (const warning of unmatchedRules(
        this.rules,
        changed.filter((t) => !before.has(t.name)),
      ))
        this.log('warn', warning);
    }
    return true;
  }

  /**
   * Reads the policy: warns of rules written for an upstream's own tool name that miss the name Tollgate sees (once
   * per version), and notes which tools a rule denies outright. Clients are told when that changes what they see.
   * A policy that cannot be read leaves things as they were: a listed denied tool is still denied when called.
   */
  private async readPolicy(): Promise<void> {
    if (this.closed) return;
    try {
      const policy = await this.o.tollgate.getPolicy();
      if (policy.version !== this.policyVersion)
        for (const warning of unmatchedRules(policy.rules, this.all)) this.log('warn', warning);
      this.policyVersion = policy.version;
      const visible = this.visibleNames();
      this.rules = policy.rules;
      this.denied = deniedTools(policy.rules, this.all);
      if (this.visibleNames() !== visible) this.o.changed();
    } catch (e) {
      this.log('warn', `could not read the policy to check its rules against the tools: ${messageOf(e)}`);
    }
  }

  private visibleNames(): string {
    return JSON.stringify(this.visible.map((t) => t.name));
  }

  /** What `tools/list` answers now (the built-in tool aside). */
  private served(): string {
    return JSON.stringify(this.visible.map((t) => ({ ...t.tool, name: t.name })));
  }

  private readPolicyIn(ms: number): void {
    this.policyTimer = setTimeout(() => {
      void this.readPolicy().finally(() => {
        if (!this.closed) this.readPolicyIn(ms);
      });
    }, ms);
    this.policyTimer.unref?.();
  }

  /**
   * PUT /v1/tools/{name} with the flags the gateway gives (the server's annotations only when trusted). A tool
   * an admin registered is the admin's (403 for agents), and a policy rule wins over flags anyway.
   */
  private async register(tool: GatewayTool): Promise<void> {
    try {
      const description = describedBy(tool);
      const put = (inputSchema?: Record<string, unknown>) =>
        this.o.tollgate.registerTool(tool.name, {
          ...(description ? { description } : {}),
          isReadOnly: tool.flags.isReadOnly,
          destructive: tool.flags.destructive,
          // The upstream's input schema, for review: people edit in a form made from it, and edits are checked.
          ...(inputSchema ? { inputSchema } : {}),
        });
      const schema = tool.tool.inputSchema as Record<string, unknown> | undefined;
      try {
        await put(schema);
      } catch (e) {
        // A schema Tollgate cannot use (too large, a remote $ref): the tool is registered without one.
        if (!(schema && e instanceof TollgateError && e.code === 'input_schema_invalid')) throw e;
        this.log('warn', `tool ${tool.name}: Tollgate refused its input schema (${e.detail}); registered without it`);
        await put();
      }
      this.registered.add(tool.name);
    } catch (e) {
      if (e instanceof TollgateError && e.code === 'forbidden') {
        this.registered.add(tool.name);
        this.log('info', `tool ${tool.name}: registered by an admin; their flags stand over the gateway's`);
        return;
      }
      // Not fatal: the proposal carries the flags as annotations, which count for an unregistered tool.
      this.log(
        'warn',
        `tool ${tool.name}: could not register it with Tollgate (${messageOf(e)}); will try again on its first call`,
      );
    }
  }

  private log(level: 'info' | 'warn' | 'error', message: string): void {
    if (this.closed && level === 'info') return;
    this.o.log(level, message);
  }
}
