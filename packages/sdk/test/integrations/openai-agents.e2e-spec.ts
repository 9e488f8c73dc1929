/**
 * `@tollgate/sdk/openai-agents` through a real Tollgate, with a fake `Model`: the model asks for a tool, Tollgate
 * holds it for a person, and the model's next request shows what it was told. Every case runs on both lines the
 * integration supports: `@openai/agents` 0.14 and 0.20 (installed here as `openai-agents-v0.20`).
 */
import * as agents014 from '@openai/agents';
import type { Model, ModelRequest, ModelResponse } from '@openai/agents';
import * as agents020 from 'openai-agents-v0.20';
import { z } from 'zod';
import { decideInterruptions, withApproval } from '../../src/integrations/openai-agents.js';
import { conversations, describeExample, pendingIn, type Setup, withServer, type TestServer } from '../support.js';

// The SDK's source is typed against 0.14; 0.20 is driven through the same API (what this file checks at run time).
const lines: Array<[string, typeof agents014]> = [
  ['0.14', agents014],
  ['0.20', agents020 as unknown as typeof agents014],
];

let server: TestServer;
let s: Setup;

withServer((started, setup) => {
  server = started;
  s = setup;
});

describe.each(lines)('@openai/agents %s', (line, { Agent, run, RunState, setTracingDisabled, tool, Usage }) => {
  setTracingDisabled(true);

  /** Asks for one tool call, then answers "done"; keeps every request. */
  class FakeModel implements Model {
    requests: ModelRequest[] = [];
    constructor(private readonly call: { name: string; arguments: object; callId?: string }) {}
    async getResponse(request: ModelRequest): Promise<ModelResponse> {
      this.requests.push(request);
      const items = typeof request.input === 'string' ? [] : request.input;
      const answered = items.some((i) => i.type === 'function_call_result');
      return {
        usage: new Usage(),
        output: answered
          ? [
              {
                type: 'message',
                role: 'assistant',
                status: 'completed',
                content: [{ type: 'output_text', text: 'done' }],
              },
            ]
          : [
              {
                type: 'function_call',
                callId: this.call.callId ?? 'call_1',
                name: this.call.name,
                arguments: JSON.stringify(this.call.arguments),
                status: 'completed',
              },
            ],
      };
    }
    async *getStreamedResponse(): AsyncIterable<never> {
      throw new Error('not used');
    }
  }

  /** The tool's output as the model received it in its second request. */
  function outputSeen(m: FakeModel): unknown {
    const items = m.requests[1].input;
    if (typeof items === 'string') throw new Error('no items');
    const result = items.find((i) => i.type === 'function_call_result');
    return result && 'output' in result ? result.output : undefined;
  }

  const conversation = conversations(() => s, `conv-agents-${line.replace('.', '')}`);

  function deleteTool(runs: Array<{ id: string }>) {
    return tool({
      name: 'delete_source',
      description: 'Delete a source',
      parameters: z.object({ id: z.string() }),
      execute: async (args) => {
        runs.push(args);
        return `deleted ${args.id}`;
      },
    });
  }

  describe('withApproval (OpenAI Agents SDK)', () => {
    it('runs the tool once a person approves, and the model sees its output', async () => {
      const conv = await conversation();
      const runs: Array<{ id: string }> = [];
      const m = new FakeModel({ name: 'delete_source', arguments: { id: 'src_2' } });
      const agent = new Agent({
        name: 'ops',
        model: m,
        tools: [withApproval(deleteTool(runs), { conversation: conv, display: (a) => ({ title: `Delete ${a.id}` }) })],
      });
      const running = run(agent, 'delete src_2');
      const [pending] = await pendingIn(s.ann, conv.id);
      expect(pending).toMatchObject({
        externalId: 'call_1',
        toolName: 'delete_source',
        arguments: { id: 'src_2' },
        display: { title: 'Delete src_2' },
      });
      expect(runs).toEqual([]);
      await s.ann.inbox().approve(pending.id);

      expect((await running).finalOutput).toBe('done');
      expect(runs).toEqual([{ id: 'src_2' }]);
      expect(outputSeen(m)).toEqual({ type: 'text', text: 'deleted src_2' });
      await conv.tollgate.flush(); // the result report goes in the background
      expect(await s.ann.getToolCall(pending.id)).toMatchObject({
        status: 'completed',
        result: { outcome: 'succeeded', output: 'deleted src_2' },
      });
    });

    it('runs with the arguments the approver edited, validated by the tool', async () => {
      const conv = await conversation();
      const runs: Array<{ id: string }> = [];
      const m = new FakeModel({ name: 'delete_source', arguments: { id: 'src_2' } });
      const running = run(
        new Agent({ name: 'ops', model: m, tools: [withApproval(deleteTool(runs), { conversation: conv })] }),
        'delete src_2',
      );
      const [pending] = await pendingIn(s.ann, conv.id);
      await s.ann.inbox().approve(pending.id, { arguments: { id: 'src_2_archive' } });
      await running;
      expect(runs).toEqual([{ id: 'src_2_archive' }]);
      expect(outputSeen(m)).toEqual({ type: 'text', text: 'deleted src_2_archive' });
    });

    it('tells the model who rejected the call, how and why; the tool does not run', async () => {
      const conv = await conversation();
      const runs: Array<{ id: string }> = [];
      const m = new FakeModel({ name: 'delete_source', arguments: { id: 'src_2' } });
      const running = run(
        new Agent({ name: 'ops', model: m, tools: [withApproval(deleteTool(runs), { conversation: () => conv })] }),
        'delete src_2',
      );
      const [pending] = await pendingIn(s.ann, conv.id);
      await s.ann.inbox().reject(pending.id, { reason: 'that is production data' });
      await running;
      expect(runs).toEqual([]);
      expect(outputSeen(m)).toEqual({
        type: 'text',
        text: 'delete_source was rejected by Ann via cli: that is production data',
      });
    });

    it('tells the model when the policy denies the call', async () => {
      const conv = await conversation();
      const ran: string[] = [];
      const shell = tool({
        name: 'shell',
        description: 'Run a command',
        parameters: z.object({ cmd: z.string() }),
        execute: async ({ cmd }) => (ran.push(cmd), 'ok'),
      });
      const m = new FakeModel({ name: 'shell', arguments: { cmd: 'rm -rf /srv' } });
      await run(new Agent({ name: 'ops', model: m, tools: [withApproval(shell, { conversation: conv })] }), 'clean up');
      expect(ran).toEqual([]);
      expect(outputSeen(m)).toEqual({
        type: 'text',
        text: expect.stringMatching(/^shell was denied by the policy: .+/),
      });
    });

    it('proposes once when the same model call is run again (same callId)', async () => {
      const conv = await conversation();
      const runs: Array<{ id: string }> = [];
      const gated = withApproval(deleteTool(runs), { conversation: conv });
      const abort = new AbortController();
      const first = run(
        new Agent({
          name: 'ops',
          model: new FakeModel({ name: 'delete_source', arguments: { id: 'src_9' }, callId: 'call_retry' }),
          tools: [gated],
        }),
        'delete src_9',
        { signal: abort.signal },
      );
      await pendingIn(s.ann, conv.id);
      abort.abort();
      await first.catch(() => undefined); // an aborted run may end either way; what matters is Tollgate's side below

      const again = run(
        new Agent({
          name: 'ops',
          model: new FakeModel({ name: 'delete_source', arguments: { id: 'src_9' }, callId: 'call_retry' }),
          tools: [gated],
        }),
        'delete src_9',
      );
      const [pending] = await pendingIn(s.ann, conv.id);
      await s.ann.inbox().approve(pending.id);
      expect((await again).finalOutput).toBe('done');
      expect(runs).toEqual([{ id: 'src_9' }]);
      await conv.tollgate.flush();
      expect(((await conv.refresh()).toolCalls ?? []).map((c) => [c.externalId, c.status])).toEqual([
        ['call_retry', 'completed'],
      ]);
    });
  });

  describe('withApproval({ interrupt: true }) + decideInterruptions: the RunState flow', () => {
    it('interrupts the run while Tollgate holds the call; resumed from a saved state, runs with the edited arguments', async () => {
      const conv = await conversation();
      const runs: Array<{ id: string }> = [];
      const m = new FakeModel({ name: 'delete_source', arguments: { id: 'src_2' } });
      const agent = new Agent({
        name: 'ops',
        model: m,
        tools: [
          withApproval(deleteTool(runs), {
            conversation: conv,
            interrupt: true,
            display: (a) => ({ title: `Delete ${a.id}` }),
          }),
        ],
      });
      const first = await run(agent, 'delete src_2');
      expect(first.interruptions.map((i) => [i.name, i.arguments])).toEqual([['delete_source', '{"id":"src_2"}']]);
      const [pending] = await pendingIn(s.ann, conv.id); // proposed before the run ended: people see it now
      expect(pending).toMatchObject({ externalId: 'call_1', display: { title: 'Delete src_2' } });
      expect(runs).toEqual([]);

      const state = await RunState.fromString(agent, first.state.toString()); // saved while people decide, restored later
      await s.ann.inbox().approve(pending.id, { arguments: { id: 'src_2_archive' } });
      await decideInterruptions({ interruptions: state.getInterruptions(), state }, { conversation: conv });
      const second = await run(agent, state);

      expect(second.finalOutput).toBe('done');
      expect(runs).toEqual([{ id: 'src_2_archive' }]);
      expect(outputSeen(m)).toEqual({ type: 'text', text: 'deleted src_2_archive' });
      await conv.tollgate.flush();
      expect(((await conv.refresh()).toolCalls ?? []).map((c) => [c.externalId, c.status])).toEqual([
        ['call_1', 'completed'],
      ]);
    });

    it('rejects the interruption with the refusal as the message the model reads', async () => {
      const conv = await conversation();
      const runs: Array<{ id: string }> = [];
      const m = new FakeModel({ name: 'delete_source', arguments: { id: 'src_2' } });
      const agent = new Agent({
        name: 'ops',
        model: m,
        tools: [withApproval(deleteTool(runs), { conversation: conv, interrupt: true })],
      });
      const first = await run(agent, 'delete src_2');
      const [pending] = await pendingIn(s.ann, conv.id);
      await s.ann.inbox().reject(pending.id, { reason: 'that is production data' });
      const second = await run(agent, await decideInterruptions(first, { conversation: conv }));
      expect(second.finalOutput).toBe('done');
      expect(runs).toEqual([]);
      expect(outputSeen(m)).toEqual({
        type: 'text',
        text: 'delete_source was rejected by Ann via cli: that is production data',
      });
    });

    it('does not interrupt a call the policy decides at once', async () => {
      const conv = await conversation();
      const ran: string[] = [];
      const shell = tool({
        name: 'shell',
        description: 'Run a command',
        parameters: z.object({ cmd: z.string() }),
        execute: async ({ cmd }) => (ran.push(cmd), 'ok'),
      });
      const m = new FakeModel({ name: 'shell', arguments: { cmd: 'rm -rf /srv' } });
      const result = await run(
        new Agent({ name: 'ops', model: m, tools: [withApproval(shell, { conversation: conv, interrupt: true })] }),
        'clean up',
      );
      expect(result.interruptions).toEqual([]);
      expect(ran).toEqual([]);
      expect(outputSeen(m)).toEqual({
        type: 'text',
        text: expect.stringMatching(/^shell was denied by the policy: .+/),
      });
    });
  });
});

describeExample('openai-agents', () => s);
