/**
 * `@tollgate/sdk/ai` through a real Tollgate, with the AI SDK's own mock model: the model asks for a tool, Tollgate
 * holds it for a person, and the next model call shows what the model was told.
 */
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { z } from 'zod';
import { withApproval } from '../../src/integrations/ai.js';
import {
  conversations,
  describeExample,
  pendingIn,
  type Setup,
  withServer,
  type TestServer,
  until,
} from '../support.js';

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

/** Asks for one tool call, then answers "done"; every prompt it was given is kept in doGenerateCalls. */
function model(toolName: string, input: object, toolCallId = 'call_1') {
  return new MockLanguageModelV3({
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
function toolResultSeen(m: MockLanguageModelV3): unknown {
  const prompt = m.doGenerateCalls[1].prompt;
  const last = prompt[prompt.length - 1];
  if (last.role !== 'tool') throw new Error(`the last message is ${last.role}`);
  const part = last.content.find((p) => p.type === 'tool-result');
  return part && 'output' in part ? part.output : undefined;
}

const conversation = conversations(() => s, 'conv-ai');

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

describe('withApproval (Vercel AI SDK)', () => {
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
      model: new MockLanguageModelV3({
        doStream: async ({ prompt }) => ({
          stream: simulateReadableStream<LanguageModelV3StreamPart>({
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

describeExample('ai-sdk', () => s);
