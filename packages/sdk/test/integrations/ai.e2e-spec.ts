/**
 * `@tollgate/sdk/ai` through a real Tollgate, with the AI SDK's own mock model: the model asks for a tool, Tollgate
 * holds it for a person, and the next model call shows what the model was told. `withApproval` runs on both lines
 * the integration supports (`ai` 6, and 7 installed here as `ai-v7`); `tollgateToolApproval` is ai 7's.
 */
import * as ai6 from 'ai';
import * as ai6Test from 'ai/test';
import type { ModelMessage } from 'ai-v7';
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { z } from 'zod';
import { toolApprovalResponses, tollgateToolApproval, withApproval } from '../../src/integrations/ai.js';
import {
  conversations,
  describeExample,
  pendingIn,
  type Setup,
  withServer,
  type TestServer,
  until,
} from '../support.js';

type Ai7 = typeof import('ai-v7');
type Ai7Test = typeof import('ai-v7/test');
type V4StreamPart =
  Awaited<ReturnType<InstanceType<Ai7Test['MockLanguageModelV4']>['doStream']>>['stream'] extends ReadableStream<
    infer P
  >
    ? P
    : never;

/**
 * ai 7 ships ES modules only, which Jest's CommonJS runtime cannot require before Node 24.9: they are imported
 * (Jest's ES-module support, `--experimental-vm-modules`), through a Function so the compiler keeps the import.
 */
const importEsm = new Function('specifier', 'return import(specifier)') as <T>(specifier: string) => Promise<T>;
let ai7: Ai7;
let ai7Test: Ai7Test;
beforeAll(async () => {
  // One after the other: Jest's loader links shared dependencies of concurrent imports unreliably.
  ai7 = await importEsm<Ai7>('ai-v7');
  ai7Test = await importEsm<Ai7Test>('ai-v7/test');
});

// The SDK's source is typed against ai 6; ai 7 (its V4 mock model) is driven through the same calls, which is what
// these cases check at run time. The mock models' results and prompts have the same shape in both.
const lines = [
  {
    line: 'ai 6',
    load: () => ({ ai: ai6, Mock: ai6Test.MockLanguageModelV3, simulate: ai6Test.simulateReadableStream }),
  },
  {
    line: 'ai 7',
    load: () => ({
      ai: ai7 as unknown as typeof ai6,
      Mock: ai7Test.MockLanguageModelV4 as unknown as typeof ai6Test.MockLanguageModelV3,
      simulate: ai7Test.simulateReadableStream as typeof ai6Test.simulateReadableStream,
    }),
  },
];
type MockModel = InstanceType<typeof ai6Test.MockLanguageModelV3>;

let server: TestServer;
let s: Setup;

withServer((started, setup) => {
  server = started;
  s = setup;
});

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

describe.each(lines)('Vercel AI SDK: $line', ({ line, load }) => {
  let generateText: typeof ai6.generateText;
  let stepCountIs: typeof ai6.stepCountIs;
  let streamText: typeof ai6.streamText;
  let tool: typeof ai6.tool;
  let Mock: typeof ai6Test.MockLanguageModelV3;
  let simulate: typeof ai6Test.simulateReadableStream;
  beforeAll(() => {
    ({
      ai: { generateText, stepCountIs, streamText, tool },
      Mock,
      simulate,
    } = load());
  });

  /** Asks for one tool call, then answers "done"; every prompt it was given is kept in doGenerateCalls. */
  function model(toolName: string, input: object, toolCallId = 'call_1') {
    return new Mock({
      doGenerate: async ({ prompt }) =>
        prompt[prompt.length - 1].role === 'tool'
          ? {
              content: [{ type: 'text', text: 'done' }],
              finishReason: { unified: 'stop', raw: 'stop' },
              usage,
              warnings: [],
            }
          : {
              content: [{ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) }],
              finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
              usage,
              warnings: [],
            },
    });
  }

  /** What the model was given as the tool's result in its second call. */
  function toolResultSeen(m: MockModel): unknown {
    const prompt = m.doGenerateCalls[1].prompt;
    const last = prompt[prompt.length - 1];
    if (last.role !== 'tool') throw new Error(`the last message is ${last.role}`);
    const part = last.content.find((p) => p.type === 'tool-result');
    return part && 'output' in part ? part.output : undefined;
  }

  const conversation = conversations(() => s, `conv-ai${line.slice(3)}`);

  function deleteTool(runs: Array<{ id: string }>) {
    return tool({
      description: 'Delete a source',
      inputSchema: z.object({ id: z.string() }),
      execute: async (args: { id: string }) => {
        runs.push(args);
        return { deleted: args.id };
      },
    });
  }

  describe('withApproval', () => {
    it('runs the tool once a person approves, and the model sees its output', async () => {
      const conv = await conversation();
      const runs: Array<{ id: string }> = [];
      const m = model('delete_source', { id: 'src_2' });
      const running = generateText({
        model: m,
        prompt: 'delete src_2',
        stopWhen: stepCountIs(3),
        tools: {
          delete_source: withApproval(deleteTool(runs), {
            toolName: 'delete_source',
            conversation: conv,
            display: (a) => ({ title: `Delete ${a.id}` }),
            reason: 'asked',
          }),
        },
      });
      const [pending] = await pendingIn(s.ann, conv.id);
      expect(pending).toMatchObject({
        externalId: 'call_1',
        toolName: 'delete_source',
        arguments: { id: 'src_2' },
        display: { title: 'Delete src_2' },
        reason: 'asked',
      });
      expect(runs).toEqual([]);
      await s.ann.inbox().approve(pending.id);

      expect((await running).text).toBe('done');
      expect(runs).toEqual([{ id: 'src_2' }]);
      expect(toolResultSeen(m)).toEqual({ type: 'json', value: { deleted: 'src_2' } });
      await conv.tollgate.flush(); // the result report goes in the background
      expect(await s.ann.getToolCall(pending.id)).toMatchObject({
        status: 'completed',
        result: { outcome: 'succeeded', output: { deleted: 'src_2' } },
      });
    });

    it('runs with the arguments the approver edited', async () => {
      const conv = await conversation();
      const runs: Array<{ id: string }> = [];
      const m = model('delete_source', { id: 'src_2' });
      const running = generateText({
        model: m,
        prompt: 'delete src_2',
        stopWhen: stepCountIs(3),
        tools: { delete_source: withApproval(deleteTool(runs), { toolName: 'delete_source', conversation: conv }) },
      });
      const [pending] = await pendingIn(s.ann, conv.id);
      await s.ann.inbox().approve(pending.id, { arguments: { id: 'src_2_archive' } });
      await running;
      expect(runs).toEqual([{ id: 'src_2_archive' }]);
      expect(toolResultSeen(m)).toEqual({ type: 'json', value: { deleted: 'src_2_archive' } });
    });

    it('tells the model who rejected the call, how and why; the tool does not run', async () => {
      const conv = await conversation();
      const runs: Array<{ id: string }> = [];
      const m = model('delete_source', { id: 'src_2' });
      const running = generateText({
        model: m,
        prompt: 'delete src_2',
        stopWhen: stepCountIs(3),
        tools: { delete_source: withApproval(deleteTool(runs), { toolName: 'delete_source', conversation: conv }) },
      });
      const [pending] = await pendingIn(s.ann, conv.id);
      await s.ann.inbox().reject(pending.id, { reason: 'that is production data' });
      await running;
      expect(runs).toEqual([]);
      expect(toolResultSeen(m)).toEqual({
        type: 'text',
        value: 'delete_source was rejected by Ann via cli: that is production data',
      });
    });

    it('tells the model when the policy denies the call, with onRefusal shaping the text', async () => {
      const conv = await conversation();
      const ran: string[] = [];
      const shell = tool({
        inputSchema: z.object({ cmd: z.string() }),
        execute: async ({ cmd }: { cmd: string }) => (ran.push(cmd), 'ok'),
      });
      const m = model('shell', { cmd: 'rm -rf /srv' });
      await generateText({
        model: m,
        prompt: 'clean up',
        stopWhen: stepCountIs(3),
        tools: {
          shell: withApproval(shell, {
            toolName: 'shell',
            conversation: () => conv,
            onRefusal: (e) => `Not allowed (${e.status}): ${e.message}`,
          }),
        },
      });
      expect(ran).toEqual([]);
      expect(toolResultSeen(m)).toEqual({
        type: 'text',
        value: expect.stringMatching(/^Not allowed \(denied\): shell was denied by the policy: .+/),
      });
    });

    it('proposes once for a step that is run again with the same toolCallId, and an abort ends only the wait', async () => {
      const conv = await conversation();
      const runs: Array<{ id: string }> = [];
      const gated = withApproval(deleteTool(runs), { toolName: 'delete_source', conversation: conv });
      const abort = new AbortController();
      const first = generateText({
        model: model('delete_source', { id: 'src_9' }, 'call_retry'),
        prompt: 'delete src_9',
        abortSignal: abort.signal,
        stopWhen: stepCountIs(3),
        tools: { delete_source: gated },
      });
      await pendingIn(s.ann, conv.id);
      abort.abort();
      await expect(first).rejects.toThrow();

      // The same step again (same tool-call id from the model): it waits on the same Tollgate call.
      const again = streamText({
        model: new Mock({
          doStream: async ({ prompt }) => ({
            stream: simulate<LanguageModelV3StreamPart>({
              chunks:
                prompt[prompt.length - 1].role === 'tool'
                  ? [
                      { type: 'text-start', id: 't' },
                      { type: 'text-delta', id: 't', delta: 'done' },
                      { type: 'text-end', id: 't' },
                      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
                    ]
                  : [
                      {
                        type: 'tool-call',
                        toolCallId: 'call_retry',
                        toolName: 'delete_source',
                        input: JSON.stringify({ id: 'src_9' }),
                      },
                      { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
                    ],
            }),
          }),
        }),
        prompt: 'delete src_9',
        stopWhen: stepCountIs(3),
        tools: { delete_source: gated },
      });
      const text = again.text;
      await until(async () => (await conv.refresh()).pendingCount === 1, 10_000, 'the call still pending');
      const [pending] = await pendingIn(s.ann, conv.id);
      await s.ann.inbox().approve(pending.id);
      expect(await text).toBe('done');
      expect(runs).toEqual([{ id: 'src_9' }]);
      await conv.tollgate.flush();
      const calls = (await conv.refresh()).toolCalls ?? [];
      expect(calls.map((c) => [c.externalId, c.status])).toEqual([['call_retry', 'completed']]);
    });
  });
});

describe('tollgateToolApproval (ai 7): Tollgate decides the AI SDK approval status, execution stays gated', () => {
  const conversation = conversations(() => s, 'conv-ai7-approval');

  function model7(toolName: string, input: object, toolCallId = 'call_1') {
    return new ai7Test.MockLanguageModelV4({
      doGenerate: async ({ prompt }) =>
        prompt[prompt.length - 1].role === 'tool'
          ? {
              content: [{ type: 'text', text: 'done' }],
              finishReason: { unified: 'stop', raw: 'stop' },
              usage,
              warnings: [],
            }
          : {
              content: [{ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input) }],
              finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
              usage,
              warnings: [],
            },
    });
  }

  /** What the model was given as the tool's result in its last call. */
  function seen(m: InstanceType<Ai7Test['MockLanguageModelV4']>): unknown {
    const prompt = m.doGenerateCalls.at(-1)!.prompt;
    const last = prompt[prompt.length - 1];
    if (last.role !== 'tool') throw new Error(`the last message is ${last.role}`);
    const part = last.content.find((p) => p.type === 'tool-result');
    return part && 'output' in part ? part.output : undefined;
  }

  function tools7(runs: Array<{ id: string }>, conv: Awaited<ReturnType<typeof conversation>>) {
    const deleteSource = ai7.tool({
      description: 'Delete a source',
      inputSchema: z.object({ id: z.string() }),
      execute: async (args: { id: string }) => (runs.push(args), { deleted: args.id }),
    });
    return {
      delete_source: withApproval(deleteSource as never, {
        toolName: 'delete_source',
        conversation: conv,
        display: (a) => ({ title: `Delete ${a.id}` }),
      }) as unknown as typeof deleteSource,
    };
  }

  it('ToolLoopAgent: waits for the person, records who approved, and runs the edited arguments once', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const m = model7('delete_source', { id: 'src_2' });
    const agent = new ai7.ToolLoopAgent({
      model: m,
      tools: tools7(runs, conv),
      toolApproval: tollgateToolApproval(),
      stopWhen: ai7.stepCountIs(3),
    });
    const running = agent.generate({ prompt: 'delete src_2' });
    const [pending] = await pendingIn(s.ann, conv.id);
    expect(pending).toMatchObject({ externalId: 'call_1', display: { title: 'Delete src_2' } });
    expect(runs).toEqual([]);
    await s.ann.inbox().approve(pending.id, { arguments: { id: 'src_2_archive' } });

    const result = await running;
    expect(result.text).toBe('done');
    expect(runs).toEqual([{ id: 'src_2_archive' }]);
    expect(seen(m)).toEqual({ type: 'json', value: { deleted: 'src_2_archive' } });
    const approval = result.steps[0].content.find((p) => p.type === 'tool-approval-response');
    expect(approval).toMatchObject({
      approved: true,
      reason: 'delete_source was approved by Ann via cli, with edited arguments',
    });
    await conv.tollgate.flush();
    expect(((await conv.refresh()).toolCalls ?? []).map((c) => [c.externalId, c.status])).toEqual([
      ['call_1', 'completed'],
    ]);
  });

  it('generateText: a refusal is the denial the model reads; the tool does not run', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const m = model7('delete_source', { id: 'src_2' });
    const running = ai7.generateText({
      model: m,
      prompt: 'delete src_2',
      stopWhen: ai7.stepCountIs(3),
      tools: tools7(runs, conv),
      toolApproval: tollgateToolApproval(),
    });
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().reject(pending.id, { reason: 'that is production data' });
    expect((await running).text).toBe('done');
    expect(runs).toEqual([]);
    expect(seen(m)).toEqual({
      type: 'execution-denied',
      reason: 'delete_source was rejected by Ann via cli: that is production data',
    });
  });

  it('streamText: a call the policy denies is denied at once; a tool not gated is not-applicable and runs', async () => {
    const conv = await conversation();
    const ran: string[] = [];
    const shell = ai7.tool({
      inputSchema: z.object({ cmd: z.string() }),
      execute: async ({ cmd }: { cmd: string }) => (ran.push(cmd), 'ok'),
    });
    const lookups: string[] = [];
    const lookup = ai7.tool({
      inputSchema: z.object({ q: z.string() }),
      execute: async ({ q }: { q: string }) => (lookups.push(q), 'found'),
    });
    const m = new ai7Test.MockLanguageModelV4({
      doStream: async ({ prompt }) => ({
        stream: ai7Test.simulateReadableStream<V4StreamPart>({
          chunks:
            prompt[prompt.length - 1].role === 'tool'
              ? [
                  { type: 'text-start', id: 't' },
                  { type: 'text-delta', id: 't', delta: 'done' },
                  { type: 'text-end', id: 't' },
                  { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
                ]
              : [
                  { type: 'tool-call', toolCallId: 'call_s', toolName: 'shell', input: '{"cmd":"rm -rf /srv"}' },
                  { type: 'tool-call', toolCallId: 'call_l', toolName: 'lookup', input: '{"q":"srv"}' },
                  { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
                ],
        }),
      }),
    });
    const result = ai7.streamText({
      model: m,
      prompt: 'clean up',
      stopWhen: ai7.stepCountIs(3),
      tools: {
        shell: withApproval(shell as never, { toolName: 'shell', conversation: () => conv }) as unknown as typeof shell,
        lookup,
      },
      toolApproval: tollgateToolApproval(),
    });
    expect(await result.text).toBe('done');
    expect(ran).toEqual([]);
    expect(lookups).toEqual(['srv']);
    const prompt = m.doStreamCalls[1].prompt;
    const results = prompt.flatMap((msg) => (msg.role === 'tool' ? msg.content : []));
    expect(results.map((r) => ('output' in r ? [r.toolName, r.output] : []))).toEqual([
      ['shell', { type: 'execution-denied', reason: expect.stringMatching(/^shell was denied by the policy: .+/) }],
      ['lookup', { type: 'text', value: 'found' }],
    ]);
    expect(((await conv.refresh()).toolCalls ?? []).map((c) => c.toolName)).toEqual(['shell']);
  });

  it("pending: 'request' ends the run with the AI SDK's approval request; Tollgate's decision answers it and the edit runs", async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const m = model7('delete_source', { id: 'src_2' });
    const tools = tools7(runs, conv);
    const agent = new ai7.ToolLoopAgent({
      model: m,
      tools,
      toolApproval: tollgateToolApproval({ pending: 'request' }),
      stopWhen: ai7.stepCountIs(3),
    });
    const messages: ModelMessage[] = [{ role: 'user', content: 'delete src_2' }];
    const first = await agent.generate({ messages });
    const request = first.content.find((p) => p.type === 'tool-approval-request');
    expect(request).toMatchObject({ reason: 'held in Tollgate for a person', toolCall: { toolCallId: 'call_1' } });
    expect(request && 'isAutomatic' in request ? request.isAutomatic : undefined).toBeFalsy();
    const [pending] = await pendingIn(s.ann, conv.id); // proposed before the run ended: people see it now
    expect(runs).toEqual([]);

    await s.ann.inbox().approve(pending.id, { arguments: { id: 'src_2_archive' } });
    messages.push(...first.responseMessages);
    messages.push({ role: 'tool', content: await toolApprovalResponses(first, { tools }) });
    const second = await agent.generate({ messages });

    expect(second.text).toBe('done');
    expect(runs).toEqual([{ id: 'src_2_archive' }]);
    expect(seen(m)).toEqual({ type: 'json', value: { deleted: 'src_2_archive' } });
    await conv.tollgate.flush();
    expect(((await conv.refresh()).toolCalls ?? []).map((c) => [c.externalId, c.status])).toEqual([
      ['call_1', 'completed'],
    ]);
  });

  it("toolApprovalResponses asks the conversation the tool's own function picks: one call in Tollgate, not two", async () => {
    const acme = await conversation();
    const other = await conversation();
    const runs: Array<{ id: string }> = [];
    const asked: unknown[] = [];
    const deleteSource = ai7.tool({
      description: 'Delete a source',
      inputSchema: z.object({ id: z.string() }),
      contextSchema: z.object({ tenant: z.string() }),
      execute: async (args: { id: string }) => (runs.push(args), { deleted: args.id }),
    });
    const tools = {
      delete_source: withApproval(deleteSource as never, {
        toolName: 'delete_source',
        // Per call: the tenant in the tool's context picks the conversation.
        conversation: ({ options }) => {
          asked.push(options.context);
          return (options.context as { tenant: string }).tenant === 'acme' ? acme : other;
        },
      }) as unknown as typeof deleteSource,
    };
    const toolsContext = { delete_source: { tenant: 'acme' } };
    const m = model7('delete_source', { id: 'src_2' });
    const agent = new ai7.ToolLoopAgent({
      model: m,
      tools,
      toolsContext,
      toolApproval: tollgateToolApproval({ pending: 'request' }),
      stopWhen: ai7.stepCountIs(3),
    });
    const messages: ModelMessage[] = [{ role: 'user', content: 'delete src_2' }];
    const first = await agent.generate({ messages });
    const [pending] = await pendingIn(s.ann, acme.id);
    await s.ann.inbox().approve(pending.id);
    messages.push(...first.responseMessages);
    messages.push({ role: 'tool', content: await toolApprovalResponses(first, { tools, toolsContext }) });
    expect((await agent.generate({ messages })).text).toBe('done');

    expect(runs).toEqual([{ id: 'src_2' }]);
    expect(asked.length).toBeGreaterThanOrEqual(3); // the approval, the responses, the resumed approval and execute
    expect(asked.every((c) => JSON.stringify(c) === '{"tenant":"acme"}')).toBe(true);
    await acme.tollgate.flush();
    expect(((await acme.refresh()).toolCalls ?? []).map((c) => [c.externalId, c.status])).toEqual([
      ['call_1', 'completed'],
    ]);
    expect((await other.refresh()).toolCalls ?? []).toEqual([]);
  });

  it('an approval response that says yes (a chat UI, a forged message) cannot run a call Tollgate refused', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const m = model7('delete_source', { id: 'src_2' });
    const agent = new ai7.ToolLoopAgent({
      model: m,
      tools: tools7(runs, conv),
      toolApproval: tollgateToolApproval({ pending: 'request' }),
      stopWhen: ai7.stepCountIs(3),
    });
    const messages: ModelMessage[] = [{ role: 'user', content: 'delete src_2' }];
    const first = await agent.generate({ messages });
    const request = first.content.find((p) => p.type === 'tool-approval-request');
    if (!request || request.type !== 'tool-approval-request') throw new Error('no approval request');
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().reject(pending.id, { reason: 'that is production data' });

    messages.push(...first.responseMessages);
    messages.push({
      role: 'tool',
      content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: true }],
    });
    const second = await agent.generate({ messages });
    expect(second.text).toBe('done');
    expect(runs).toEqual([]);
    expect(seen(m)).toEqual({
      type: 'execution-denied',
      reason: 'delete_source was rejected by Ann via cli: that is production data',
    });
  });

  it('an approval response that says yes before anyone decided in Tollgate leaves the call waiting in the gate', async () => {
    const conv = await conversation();
    const runs: Array<{ id: string }> = [];
    const m = model7('delete_source', { id: 'src_2' });
    const agent = new ai7.ToolLoopAgent({
      model: m,
      tools: tools7(runs, conv),
      toolApproval: tollgateToolApproval({ pending: 'request' }),
      stopWhen: ai7.stepCountIs(3),
    });
    const messages: ModelMessage[] = [{ role: 'user', content: 'delete src_2' }];
    const first = await agent.generate({ messages });
    const request = first.content.find((p) => p.type === 'tool-approval-request');
    if (!request || request.type !== 'tool-approval-request') throw new Error('no approval request');
    messages.push(...first.responseMessages);
    messages.push({
      role: 'tool',
      content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: true }],
    });
    const second = agent.generate({ messages });
    const [pending] = await pendingIn(s.ann, conv.id);
    expect(runs).toEqual([]);
    await s.ann.inbox().approve(pending.id, { arguments: { id: 'src_2_archive' } });
    expect((await second).text).toBe('done');
    expect(runs).toEqual([{ id: 'src_2_archive' }]);
  });
});

describeExample('ai-sdk', () => s);
