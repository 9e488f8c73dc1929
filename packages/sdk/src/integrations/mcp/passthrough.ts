/**
 * Resources and prompts, passed through for the upstreams that opt in (`resources: true`, `prompts: true`): what
 * they offer is listed to the client as one server's, and a read or a prompt is forwarded to the upstream that
 * offers it. They are not tool calls: nothing is proposed to Tollgate or recorded, which is why they are off unless
 * the operator turns them on (some clients hand resource reads to the model as tools).
 * Prompts keep their names, or are `<server>__<name>` for a namespaced server; resource URIs are never renamed.
 * Ownership follows the config's order, never who answers first: a URI is read from the first upstream that lists
 * it or whose template's fixed beginning it has, so a later server cannot capture another's reads.
 */
import type {
  GetPromptResult,
  ListPromptsResult,
  ListResourcesResult,
  ListResourceTemplatesResult,
  Prompt,
  ReadResourceResult,
  RequestOptions,
  Resource,
  ResourceTemplateType,
} from '@modelcontextprotocol/client';
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError } from '@modelcontextprotocol/server';
import { messageOf, type Log } from './shared.js';
import type { Upstream } from './upstreams.js';

/** The most prompts, resources or resource templates taken from one upstream. */
export const MAX_ITEMS = 1000;
/** The longest URI read, and the longest template whose fixed beginning routes reads. */
export const MAX_URI = 8192;
const MAX_TOLD = 1000;

type Listed<T> = { upstream: Upstream; items: T[] };

export class PassThrough {
  /** Exposed prompt name → where it comes from; rebuilt by every prompts/list. */
  private prompts = new Map<string, { upstream: string; name: string }>();
  /** Upstream → the URIs it listed last. */
  private listedUris = new Map<string, Set<string>>();
  /** Upstream → its resource templates, kept until it says its resources changed (`forget`). */
  private readonly templateCache = new Map<string, ResourceTemplateType[]>();
  /** Faults already told, so a client that lists often does not fill the log. */
  private readonly told = new Set<string>();

  constructor(
    private readonly upstreams: Map<string, Upstream>,
    private readonly log: Log,
  ) {}

  /** Upstreams whose prompts clients see: the operator turned them on, and the server offers them. */
  withPrompts(): Upstream[] {
    return [...this.upstreams.values()].filter(
      (u) => u.config.prompts === true && !!u.client.getServerCapabilities()?.prompts,
    );
  }

  withResources(): Upstream[] {
    return [...this.upstreams.values()].filter(
      (u) => u.config.resources === true && !!u.client.getServerCapabilities()?.resources,
    );
  }

  async listPrompts(options: RequestOptions): Promise<ListPromptsResult> {
    const exposed = new Map<string, { upstream: string; name: string }>();
    const prompts: Prompt[] = [];
    for (const { upstream: u, items } of await this.each(this.withPrompts(), 'prompts', (u) =>
      u.client.listPrompts(undefined, options).then((r) => r.prompts),
    )) {
      for (const prompt of items) {
        const name = u.config.namespace ? `${u.config.name}__${prompt.name}` : prompt.name;
        const first = exposed.get(name);
        if (first) {
          this.once(
            `prompt ${name}`,
            `prompt ${JSON.stringify(name)} of upstream ${u.config.name} is not listed: upstream ${first.upstream} offers one of that name (set namespace: true on one of them)`,
          );
          continue;
        }
        exposed.set(name, { upstream: u.config.name, name: prompt.name });
        prompts.push({ ...prompt, name });
      }
    }
    this.prompts = exposed;
    return { prompts };
  }

  async getPrompt(
    params: { name: string; arguments?: Record<string, string> },
    options: RequestOptions,
  ): Promise<GetPromptResult> {
    let at = this.prompts.get(params.name);
    if (!at) {
      await this.listPrompts(options); // a client may ask for a prompt it knows without listing first
      at = this.prompts.get(params.name);
    }
    if (!at) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${params.name}`);
    return this.upstreams
      .get(at.upstream)!
      .client.getPrompt({ name: at.name, ...(params.arguments ? { arguments: params.arguments } : {}) }, options);
  }

  async listResources(options: RequestOptions): Promise<ListResourcesResult> {
    const seen = new Map<string, string>();
    const listedUris = new Map<string, Set<string>>();
    const resources: Resource[] = [];
    for (const { upstream: u, items } of await this.each(this.withResources(), 'resources', (u) =>
      u.client.listResources(undefined, options).then((r) => r.resources),
    )) {
      listedUris.set(u.config.name, new Set(items.map((r) => r.uri)));
      for (const resource of items) {
        const first = seen.get(resource.uri);
        if (first) {
          this.once(
            `resource ${resource.uri}`,
            `resource ${JSON.stringify(resource.uri)} of upstream ${u.config.name} is not listed: upstream ${first} lists the same URI, and reads go there`,
          );
          continue;
        }
        seen.set(resource.uri, u.config.name);
        resources.push(resource);
      }
    }
    this.listedUris = listedUris;
    return { resources };
  }

  async listResourceTemplates(options: RequestOptions): Promise<ListResourceTemplatesResult> {
    return { resourceTemplates: (await this.templates(options)).flatMap((l) => l.items) };
  }

  /**
   * To the first upstream, in the config's order, that listed the URI or has a template whose fixed beginning (up
   * to its first `{`, scheme included) the URI starts with; else resource not found. Templates are never run as
   * patterns: an upstream's template must not be able to stall the gateway. The upstream says whether it has it.
   */
  async readResource(params: { uri: string }, options: RequestOptions): Promise<ReadResourceResult> {
    const { uri } = params;
    if (uri.length > MAX_URI)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `URI over ${MAX_URI} characters`);
    if (![...this.listedUris.values()].some((uris) => uris.has(uri))) await this.listResources(options);
    const templates = new Map((await this.templates(options)).map((l) => [l.upstream.config.name, l.items]));
    const owner = this.withResources().find(
      (u) =>
        this.listedUris.get(u.config.name)?.has(uri) ||
        templates.get(u.config.name)?.some((t) => {
          const fixed = t.uriTemplate.length <= MAX_URI ? t.uriTemplate.split('{')[0] : '';
          return /^[A-Za-z][A-Za-z0-9+.-]*:./.test(fixed) && uri.startsWith(fixed);
        }),
    );
    if (!owner) throw new ResourceNotFoundError(uri);
    return owner.client.readResource({ uri }, options);
  }

  /** The upstream said its resources changed: its templates are listed again when next needed. */
  forget(upstream: string): void {
    this.templateCache.delete(upstream);
  }

  private templates(options: RequestOptions): Promise<Array<Listed<ResourceTemplateType>>> {
    return this.each(this.withResources(), 'resource templates', async (u) => {
      const cached = this.templateCache.get(u.config.name);
      if (cached) return cached;
      const listed = (await u.client.listResourceTemplates(undefined, options)).resourceTemplates;
      this.templateCache.set(u.config.name, listed);
      return listed;
    });
  }

  /** Each upstream's list, at once; one that fails is left out (and logged), the others still answer. */
  private async each<T>(
    upstreams: Upstream[],
    what: string,
    list: (u: Upstream) => Promise<T[]>,
  ): Promise<Array<Listed<T>>> {
    const answers = await Promise.allSettled(upstreams.map(list));
    return upstreams.flatMap((upstream, i) => {
      const answer = answers[i];
      if (answer.status === 'fulfilled') return [{ upstream, items: answer.value.slice(0, MAX_ITEMS) }];
      this.log('warn', `upstream ${upstream.config.name}: listing its ${what} failed: ${messageOf(answer.reason)}`);
      return [];
    });
  }

  private once(key: string, message: string): void {
    if (this.told.has(key)) return;
    if (this.told.size >= MAX_TOLD) this.told.clear();
    this.told.add(key);
    this.log('warn', message);
  }
}
