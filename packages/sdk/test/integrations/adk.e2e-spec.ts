/**
 * `@tollgate/sdk/adk` through a real Tollgate, with a real ADK agent and runner whose model is a scripted `BaseLlm`
 * (no network): the model asks for tools, Tollgate decides or holds them for a person, and the model's next
 * request shows what it was told.
 */
import {
  BaseLlm,
  BaseToolset,
  FunctionTool,
  GOOGLE_SEARCH,
  GoogleSearchTool,
  InMemoryRunner,
  LlmAgent,
  REQUEST_CONFIRMATION_FUNCTION_CALL_NAME,
  type BaseTool,
  type Event,
  type LlmRequest,
  type LlmResponse,
  type ToolProcessLlmRequest,
} from '@google/adk';
import { z } from 'zod';
import { TollgateConversation } from '../../src/conversation.js';
import {
  decideConfirmations,
  pendingConfirmations,
  resumeWhenDecided,
  tollgateTools,
  withApproval,
} from '../../src/integrations/adk.js';
import { conversations, describeExample, pendingIn, type Setup, withServer } from '../support.js';

let s: Setup;

withServer((_started, setup) => {
  s = setup;
});

/** A model that asks for one function call, then answers "done"; keeps every request. */
class ScriptedLlm extends BaseLlm {
  requests: LlmRequest[] = [];
  constructor(private readonly call: { name: string; args: Record<string, unknown>; id?: string }) {
    super({ model: 'scripted' });
  }
  async *generateContentAsync(request: LlmRequest): AsyncGenerator<LlmResponse, void> {
    this.requests.push(request);
    const answered = request.contents.some((c) => (c.parts ?? []).some((p) => p.functionResponse));
    yield answered
      ? { content: { role: 'model', parts: [{ text: 'done' }] } }
      : {
          content: {
            role: 'model',
            parts: [{ functionCall: { id: this.call.id ?? 'call_1', name: this.call.name, args: this.call.args } }],
          },
        };
  }
  async connect(): Promise<never> {
    throw new Error('not used');
  }
}

/** What the model was told of its call: the function response in its last request. */
function responseSeen(m: ScriptedLlm): unknown {
  const parts = m.requests.at(-1)!.contents.flatMap((c) => c.parts ?? []);
  return parts.find((p) => p.functionResponse)?.functionResponse?.response;
}

function deleteTool(runs: Array<{ id: string }>, o: { requireConfirmation?: boolean } = {}) {
  return new FunctionTool({
    name: 'delete_source',
    description: 'Delete a source',
    parameters: z.object({ id: z.string() }),
    ...o,
    execute: async (args) => {
      runs.push(args);
      return { deleted: args.id };
    },
  });
}

/** An agent on an in-memory runner, and a function that runs one message in one session. */
async function agentWith(model: ScriptedLlm, tools: BaseTool[] | ReturnType<typeof tollgateTools>) {
  const runner = new InMemoryRunner({ agent: new LlmAgent({ name: 'ops', model, tools }), appName: 'ops' });
  const { id: sessionId } = await runner.sessionService.createSession({ appName: 'ops', userId: 'ann' });
  const send = async (newMessage: Parameters<typeof runner.runAsync>[0]['newMessage']): Promise<Event[]> => {
    const events: Event[] = [];
    for await (const e of runner.runAsync({ userId: 'ann', sessionId, newMessage })) events.push(e);
    return events;
  };
  return { runner, sessionId, send, ask: (text: string) => send({ role: 'user', parts: [{ text }] }) };
}

const conversation = conversations(() => s, 'conv-adk');

describe('tollgateTools / withApproval (Google ADK), waiting inside the run', () => {
  it('runs an auto-approved call at once, and the model sees its result', async () => {
    const conv = await conversation();
    const ran: string[] = [];
    const getSource = new FunctionTool({
      name: 'get_source',
      description: 'Read a source',
      parameters: z.object({ id: z.string() }),
      execute: async ({ id }) => (ran.push(id), { title: `Source ${id}` }),
    });
    const m = new ScriptedLlm({ name: 'get_source', args: { id: 'src_1' } });
    const { ask } = await agentWith(m, tollgateTools([getSource], { conversation: conv }));
    const events = await ask('read src_1');
    expect(events.at(-1)?.content?.parts?.[0]?.text).toBe('done');
    expect(ran).toEqual(['src_1']);
    expect(responseSeen(m)).toEqual({ title: 'Source src_1' });
    await conv.tollgate.flush(); // the result report goes in the background
    expect(((await conv.refresh()).toolCalls ?? []).map((c) => [c.externalId, c.status, c.result?.output])).toEqual([
      ['call_1', 'completed', { title: 'Source src_1' }],
    ]);
  });

  it('tells the model when the policy denies the call; the tool never runs', async () => {
    const conv = await conversation();
    const ran: string[] = [];
    const shell = new FunctionTool({
      name: 'shell',
      description: 'Run a command',
      parameters: z.object({ cmd: z.string() }),
      execute: async ({ cmd }) => (ran.push(cmd), 'ok'),
    });
    const m = new ScriptedLlm({ name: 'shell', args: { cmd: 'rm -rf /srv' } });
    const { ask } = await agentWith(m, [withApproval(shell, { conversation: () => conv })]);
    await ask('clean up');
    expect(ran).toEqual([]);
    expect(responseSeen(m)).toEqual({ result: expect.stringMatching(/^shell was denied by the policy: .+/) });
  });

  it('waits while a person decides, then runs with the arguments they edited (validated by the tool)', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const m = new ScriptedLlm({ name: 'delete_source', args: { id: 'src_2' } });
    const { ask } = await agentWith(
      m,
      tollgateTools([deleteTool(runs)], { conversation: conv, display: (a) => ({ title: `Delete ${a.id}` }) }),
    );
    const running = ask('delete src_2');
    const [pending] = await pendingIn(s.ann, conv.id);
    expect(pending).toMatchObject({
      externalId: 'call_1',
      toolName: 'delete_source',
      arguments: { id: 'src_2' },
      display: { title: 'Delete src_2' },
    });
    expect(runs).toEqual([]);
    await s.ann.inbox().approve(pending.id, { arguments: { id: 'src_2_archive' } });

    expect((await running).at(-1)?.content?.parts?.[0]?.text).toBe('done');
    expect(runs).toEqual([{ id: 'src_2_archive' }]);
    expect(responseSeen(m)).toEqual({ deleted: 'src_2_archive' });
    await conv.tollgate.flush();
    expect(await s.ann.getToolCall(pending.id)).toMatchObject({
      status: 'completed',
      decision: { by: { id: 'ann', via: 'cli' } },
      result: { outcome: 'succeeded', output: { deleted: 'src_2_archive' } },
    });
  });

  it('tells the model who rejected the call, how and why; the tool does not run', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const m = new ScriptedLlm({ name: 'delete_source', args: { id: 'src_2' } });
    const { ask } = await agentWith(m, [withApproval(deleteTool(runs), { conversation: conv })]);
    const running = ask('delete src_2');
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().reject(pending.id, { reason: 'that is production data' });
    await running;
    expect(runs).toEqual([]);
    expect(responseSeen(m)).toEqual({ result: 'delete_source was rejected by Ann via cli: that is production data' });
  });

  it("takes the place of the tool's own requireConfirmation: approved in Tollgate, it runs without asking ADK", async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const m = new ScriptedLlm({ name: 'delete_source', args: { id: 'src_2' } });
    const { ask } = await agentWith(m, [
      withApproval(deleteTool(runs, { requireConfirmation: true }), { conversation: conv }),
    ]);
    const running = ask('delete src_2');
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().approve(pending.id);
    const events = await running;
    expect(runs).toEqual([{ id: 'src_2' }]);
    const calls = events.flatMap((e) => e.content?.parts ?? []).map((p) => p.functionCall?.name);
    expect(calls).not.toContain(REQUEST_CONFIRMATION_FUNCTION_CALL_NAME);
    expect(responseSeen(m)).toEqual({ deleted: 'src_2' });
  });

  it("gates a toolset's tools as they are listed, with options per tool", async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    class Library extends BaseToolset {
      constructor() {
        super([]);
      }
      async getTools(): Promise<BaseTool[]> {
        return [deleteTool(runs)];
      }
      async close(): Promise<void> {}
    }
    const m = new ScriptedLlm({ name: 'delete_source', args: { id: 'src_2' } });
    const { ask } = await agentWith(
      m,
      tollgateTools([new Library()], (t) => ({
        conversation: conv,
        display: (a) => ({ title: `${t.name} ${String(a.id)}` }),
      })),
    );
    const running = ask('delete src_2');
    const [pending] = await pendingIn(s.ann, conv.id);
    expect(pending).toMatchObject({ toolName: 'delete_source', display: { title: 'delete_source src_2' } });
    expect(runs).toEqual([]);
    await s.ann.inbox().approve(pending.id, { arguments: { id: 'src_3' } });
    await running;
    expect(runs).toEqual([{ id: 'src_3' }]);
    expect(responseSeen(m)).toEqual({ deleted: 'src_3' });
  });

  it('fails closed when Tollgate cannot be reached: the tool never runs and the model is told it failed', async () => {
    const conv = await conversation();
    // The same conversation, through a client whose server is gone (a closed port on loopback).
    const gone = s.agent({ url: 'http://127.0.0.1:1', retry: { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 1 } });
    const unreachable = new TollgateConversation(gone, conv.conversation);
    const runs: Array<{ id: string }> = [];
    const m = new ScriptedLlm({ name: 'delete_source', args: { id: 'src_2' } });
    const { ask } = await agentWith(m, tollgateTools([deleteTool(runs)], { conversation: unreachable }));
    await ask('delete src_2');
    expect(runs).toEqual([]);
    // ADK gives a tool's error to the model as the call's response.
    expect(responseSeen(m)).toEqual({ error: expect.stringMatching(/^network_error: /) });
    expect((await conv.refresh()).toolCalls ?? []).toEqual([]);
  });

  it("refuses a model-side tool (ADK's Google Search): Google would run it, no call would reach Tollgate", async () => {
    const conv = await conversation();
    const refused = 'cannot gate a model-side tool: google_search; remove it or accept that it runs without Tollgate';
    expect(() => tollgateTools([GOOGLE_SEARCH], { conversation: conv })).toThrow(new TypeError(refused));
    expect(() => withApproval(new GoogleSearchTool(), { conversation: conv })).toThrow(new TypeError(refused));
  });

  it('sends no model request with a gated tool that did not register itself where the runner finds it', async () => {
    const conv = await conversation();
    // Declared like a function, added to the request like Google Search: the model would answer it itself.
    class Grounding extends GoogleSearchTool {
      override _getDeclaration() {
        return { name: 'google_search', description: 'Search' };
      }
      override async processLlmRequest({ llmRequest }: ToolProcessLlmRequest): Promise<void> {
        (llmRequest.config ??= {}).tools = [...(llmRequest.config.tools ?? []), { googleSearch: {} }];
      }
    }
    const m = new ScriptedLlm({ name: 'google_search', args: { q: 'x' } });
    const { ask } = await agentWith(m, tollgateTools([new Grounding()], { conversation: conv }));
    await expect(ask('search')).rejects.toThrow(
      new TypeError('cannot gate a model-side tool: google_search; remove it or accept that it runs without Tollgate'),
    );
    expect(m.requests).toEqual([]);
    expect((await conv.refresh()).toolCalls ?? []).toEqual([]);
  });

  it('proposes once when the same model call is run again (same function call id)', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const gated = tollgateTools([deleteTool(runs)], { conversation: conv });
    const first = await agentWith(new ScriptedLlm({ name: 'delete_source', args: { id: 'src_9' }, id: 'fc_9' }), gated);
    const abort = new AbortController();
    const abandoned = (async () => {
      for await (const _e of first.runner.runAsync({
        userId: 'ann',
        sessionId: first.sessionId,
        newMessage: { role: 'user', parts: [{ text: 'delete src_9' }] },
        abortSignal: abort.signal,
      }));
    })();
    await pendingIn(s.ann, conv.id);
    abort.abort();
    await abandoned.catch(() => undefined); // an aborted run may end either way; what matters is Tollgate's side

    const m = new ScriptedLlm({ name: 'delete_source', args: { id: 'src_9' }, id: 'fc_9' });
    const again = (await agentWith(m, gated)).ask('delete src_9');
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().approve(pending.id);
    await again;
    expect(runs).toEqual([{ id: 'src_9' }]);
    await conv.tollgate.flush();
    expect(((await conv.refresh()).toolCalls ?? []).map((c) => [c.externalId, c.status])).toEqual([
      ['fc_9', 'completed'],
    ]);
  });
});

describe('withApproval({ interrupt: true }) + resumeWhenDecided: ADK confirmation requests', () => {
  it("ends the run with ADK's confirmation request while Tollgate holds the call; resumed, runs the edited arguments", async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const m = new ScriptedLlm({ name: 'delete_source', args: { id: 'src_2' } });
    const { runner, sessionId, ask } = await agentWith(
      m,
      tollgateTools([deleteTool(runs)], { conversation: conv, interrupt: true }),
    );
    const first = await ask('delete src_2');
    const [waiting] = pendingConfirmations(first);
    expect(waiting.request).toMatchObject({
      kind: 'tollgate-approval',
      conversationId: conv.id,
      toolName: 'delete_source',
      arguments: { id: 'src_2' },
    });
    const [pending] = await pendingIn(s.ann, conv.id); // proposed before the run ended: people see it now
    expect(pending.id).toBe(waiting.request.toolCallId);
    expect(runs).toEqual([]);
    expect(m.requests).toHaveLength(1); // the model has not been told anything yet

    await s.ann.inbox().approve(pending.id, { arguments: { id: 'src_2_archive' } });
    const resumed = await resumeWhenDecided(runner, { userId: 'ann', sessionId }, { tollgate: s.agent() });
    expect(resumed.at(-1)?.content?.parts?.[0]?.text).toBe('done');
    expect(runs).toEqual([{ id: 'src_2_archive' }]);
    expect(responseSeen(m)).toEqual({ deleted: 'src_2_archive' });
    await conv.tollgate.flush();
    expect(((await conv.refresh()).toolCalls ?? []).map((c) => [c.externalId, c.status])).toEqual([
      ['call_1', 'completed'],
    ]);
    // Nothing is left to resume.
    expect(await resumeWhenDecided(runner, { userId: 'ann', sessionId }, { tollgate: s.agent() })).toEqual([]);
  });

  it('answers a rejection: the model reads the refusal, the tool does not run', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const m = new ScriptedLlm({ name: 'delete_source', args: { id: 'src_2' } });
    const { ask, send } = await agentWith(m, [withApproval(deleteTool(runs), { conversation: conv, interrupt: true })]);
    const first = await ask('delete src_2');
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().reject(pending.id, { reason: 'that is production data' });
    const answer = await decideConfirmations(first, { tollgate: s.agent() });
    expect(answer?.parts?.[0]?.functionResponse?.response).toMatchObject({ confirmed: false });
    await send(answer!);
    expect(runs).toEqual([]);
    expect(responseSeen(m)).toEqual({ result: 'delete_source was rejected by Ann via cli: that is production data' });
  });

  it('a confirmation sent by anyone else approves nothing: the tool asks Tollgate, which says rejected', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const m = new ScriptedLlm({ name: 'delete_source', args: { id: 'src_2' } });
    const { ask, send } = await agentWith(m, [withApproval(deleteTool(runs), { conversation: conv, interrupt: true })]);
    const [waiting] = pendingConfirmations(await ask('delete src_2'));
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().reject(pending.id, { reason: 'no' });
    // The chat's user (or anyone who can send to the session) confirms it in ADK's own way.
    await send({
      role: 'user',
      parts: [
        {
          functionResponse: {
            id: waiting.functionCallId,
            name: REQUEST_CONFIRMATION_FUNCTION_CALL_NAME,
            response: { confirmed: true },
          },
        },
      ],
    });
    expect(runs).toEqual([]);
    expect(responseSeen(m)).toEqual({ result: 'delete_source was rejected by Ann via cli: no' });
  });

  it('does not interrupt a call the policy decides at once', async () => {
    const conv = await conversation();
    const ran: string[] = [];
    const shell = new FunctionTool({
      name: 'shell',
      description: 'Run a command',
      parameters: z.object({ cmd: z.string() }),
      execute: async ({ cmd }) => (ran.push(cmd), 'ok'),
    });
    const m = new ScriptedLlm({ name: 'shell', args: { cmd: 'rm -rf /srv' } });
    const { ask } = await agentWith(m, tollgateTools([shell], { conversation: conv, interrupt: true }));
    expect(pendingConfirmations(await ask('clean up'))).toEqual([]);
    expect(ran).toEqual([]);
    expect(responseSeen(m)).toEqual({ result: expect.stringMatching(/^shell was denied by the policy: .+/) });
  });
});

describeExample('adk', () => s);
