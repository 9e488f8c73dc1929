/**
 * Resources and prompts, passed through: what the upstreams offer is listed to the client as one server's, and a
 * read or a prompt is forwarded to the upstream that offers it. They are not tool calls: nothing is proposed to
 * Tollgate (the client application chooses them, not the model's tool use), so an operator who wants an upstream's
 * resources or prompts kept away from clients turns them off for it (`resources: false`, `prompts: false`).
 * Prompts are named as tools are (`<server>__<name>` for a namespaced server); resource URIs are never renamed.
 */
import { UriTemplate, type RequestOptions } from '@modelcontextprotocol/client';
import type {
  GetPromptResult,
  ListPromptsResult,
  ListResourcesResult,
  ListResourceTemplatesResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType,
} from '@modelcontextprotocol/client';
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError } from '@modelcontextprotocol/server';
import type { Log } from './shared.js';
import type { Upstream } from './upstreams.js';

/** The most prompts, resources or resource templates taken from one upstream. */
export const MAX_ITEMS = 1000;

export class PassThrough {
  /** Exposed prompt name → where it comes from; rebuilt by every prompts/list. */
  private prompts = new Map<string, { upstream: string; name: string }>();
  /** Resource URI → the upstream that listed it; rebuilt by every resources/list. */
  private resources = new Map<string, string>();
  /** Collisions already told, so a client that lists often does not fill the log. */
  private readonly told = new Set<string>();

  constructor(
    private readonly upstreams: Map<string, Upstream>,
    private readonly log: Log,
  ) {}

  /** Upstreams whose prompts clients see: the server offers them, and the operator did not turn them off. */
  withPrompts(): Upstream[] {
    return [...this.upstreams.values()].filter(
      (u) => u.config.prompts !== false && !!u.client.getServerCapabilities()?.prompts,
    );
  }

  withResources(): Upstream[] {
    return [...this.upstreams.values()].filter(
      (u) => u.config.resources !== false && !!u.client.getServerCapabilities()?.resources,
    );
  }

  async listPrompts(options: RequestOptions): Promise<ListPromptsResult> {
    const exposed = new Map<string, { upstream: string; name: string }>();
    const prompts: Prompt[] = [];
    for (const u of this.withPrompts()) {
      const listed = (await u.client.listPrompts(undefined, options)).prompts.slice(0, MAX_ITEMS);
      for (const prompt of listed) {
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
    const owners = new Map<string, string>();
    const resources: Resource[] = [];
    for (const u of this.withResources()) {
      const listed = (await u.client.listResources(undefined, options)).resources.slice(0, MAX_ITEMS);
      for (const resource of listed) {
        const first = owners.get(resource.uri);
        if (first) {
          this.once(
            `resource ${resource.uri}`,
            `resource ${JSON.stringify(resource.uri)} of upstream ${u.config.name} is not listed: upstream ${first} lists the same URI, and reads go there`,
          );
          continue;
        }
        owners.set(resource.uri, u.config.name);
        resources.push(resource);
      }
    }
    this.resources = owners;
    return { resources };
  }

  async listResourceTemplates(options: RequestOptions): Promise<ListResourceTemplatesResult> {
    return { resourceTemplates: (await this.templates(options)).map((t) => t.template) };
  }

  /** To the upstream that listed the URI, else to the first whose template matches it; else resource not found. */
  async readResource(params: { uri: string }, options: RequestOptions): Promise<ReadResourceResult> {
    let owner = this.resources.get(params.uri);
    if (!owner) {
      await this.listResources(options);
      owner = this.resources.get(params.uri);
    }
    if (!owner) owner = (await this.templates(options)).find((t) => t.matches(params.uri))?.upstream;
    if (!owner) throw new ResourceNotFoundError(params.uri);
    return this.upstreams.get(owner)!.client.readResource({ uri: params.uri }, options);
  }

  private async templates(
    options: RequestOptions,
  ): Promise<Array<{ upstream: string; template: ResourceTemplateType; matches(uri: string): boolean }>> {
    const all: Array<{ upstream: string; template: ResourceTemplateType; matches(uri: string): boolean }> = [];
    for (const u of this.withResources()) {
      const listed = (await u.client.listResourceTemplates(undefined, options)).resourceTemplates.slice(0, MAX_ITEMS);
      for (const template of listed) {
        let parsed: UriTemplate | undefined;
        try {
          parsed = new UriTemplate(template.uriTemplate);
        } catch {
          parsed = undefined; // a template the SDK cannot read is listed, and matches nothing
        }
        all.push({ upstream: u.config.name, template, matches: (uri) => parsed?.match(uri) != null });
      }
    }
    return all;
  }

  private once(key: string, message: string): void {
    if (this.told.has(key)) return;
    this.told.add(key);
    this.log('warn', message);
  }
}
